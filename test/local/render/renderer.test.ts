/**
 * The Renderer's queue: at most `concurrency` renders at once, one at a time per source, a free
 * slot going to the source with the fewest running, so one slow chart never holds the others;
 * every checkout removed after its render, a failed one too; stop() kills what runs.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Checkout } from '../../../src/render/checkout.ts';
import { DEFAULT_RENDER_LIMITS } from '../../../src/render/limits.ts';
import { Renderer } from '../../../src/render/renderer.ts';
import type { RenderResult } from '../../../src/render/types.ts';
import { eventually } from '../../support/eventually.ts';
import { CONFIG_MAP, helmRequest, type SourceRepo, sourceRepository } from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

const CHART = (path: string) => helmRequest(path);
const CM = CONFIG_MAP;
const CHART_YAML = 'apiVersion: v2\nname: c\nversion: 0.1.0\n';

let renderer: Renderer | undefined;
afterEach(() => renderer?.stop());

/** Renders `path` of `commit` as `source`, noting every checkout it wrote. */
function render(
  r: Renderer,
  repo: SourceRepo,
  commit: string,
  source: string,
  path: string,
  checkouts: Checkout[],
) {
  return r.render({
    source,
    request: CHART(path),
    checkout: async () => {
      const checkout = await repo.checkout(commit);
      checkouts.push(checkout);
      return checkout;
    },
  });
}

describe('the Renderer', () => {
  it("renders other sources while one source's slow renders wait their turn", async () => {
    const repo = await sourceRepository();
    const commit = await repo.commit({
      'slow/Chart.yaml': CHART_YAML,
      'slow/templates/t.yaml': `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}${CM}`,
      'fast/Chart.yaml': CHART_YAML,
      'fast/templates/t.yaml': CM,
    });
    // Ten minutes: the slow renders never end by themselves while the test runs.
    renderer = new Renderer({
      tools: renderTools(),
      limits: { ...DEFAULT_RENDER_LIMITS, timeoutMs: 600_000, concurrency: 2 },
    });
    const checkouts: Checkout[] = [];
    const slow = [1, 2, 3].map(() =>
      render(renderer as Renderer, repo, commit, 'shop/slow', 'slow', checkouts),
    );
    const settled: RenderResult[] = [];
    for (const p of slow)
      p.then(
        (r) => settled.push(r),
        () => {},
      );
    // Two other sources, asked for after the slow source's three: both render while its first runs.
    const fast = await Promise.all([
      render(renderer, repo, commit, 'shop/fast', 'fast', checkouts),
      render(renderer, repo, commit, 'web/fast', 'fast', checkouts),
    ]);
    for (const result of fast)
      expect(result.ok && result.objects.map((o) => o.metadata.name)).toEqual(['cm']);
    expect(renderer.stateOf('shop/slow#1')).toBe('running');
    expect(renderer.stateOf('shop/slow#2')).toBe('waiting');
    expect(settled).toEqual([]);
    // The fast renders' checkouts are gone; the slow one's is still in use.
    await eventually(() => expect(checkouts.filter((c) => existsSync(c.root)).length).toBe(1));
    renderer.stop();
    const stopped = await Promise.allSettled(slow);
    expect(stopped.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('removes the checkout of a failed render, and reports a refused commit without running a tool', async () => {
    const repo = await sourceRepository();
    renderer = new Renderer({ tools: renderTools() });
    const checkouts: Checkout[] = [];
    const broken = await repo.commit({ 'c/Chart.yaml': CHART_YAML, 'c/templates/t.yaml': '{{ fail "no" }}' });
    const failed = await render(renderer, repo, broken, 'shop/c', 'c', checkouts);
    expect(failed.ok).toBe(false);
    const escaping = await repo.commit({
      'c/Chart.yaml': CHART_YAML,
      'c/templates/t.yaml': { symlink: '/etc/passwd' },
    });
    const refused = await render(renderer, repo, escaping, 'shop/c', 'c', checkouts);
    expect(refused.ok ? undefined : refused.failure).toMatchObject({
      tool: 'janus',
      bound: 'input',
      file: 'c/templates/t.yaml',
    });
    expect(checkouts).toHaveLength(1); // the refused commit's checkout was never handed over
    expect(existsSync(checkouts[0]?.root ?? '/')).toBe(false);
  });
});
