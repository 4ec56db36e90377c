/**
 * Which sources `janus plan --base` plans, with the real kustomize on a real repository, without a
 * cluster: every source rendered once at the base and once at the head, and planned only when its
 * render changes, whichever file changed it (one outside its folder that its kustomization reads
 * included); a declaration that changes nothing rendered is not planned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { planSources, renderSourcesAtBoth } from '../../../src/cli/plan-sources.ts';
import { repositoryPolicy } from '../../../src/gitops/index.ts';
import { Renderer, type RenderJob } from '../../../src/render/renderer.ts';
import type { RenderResult } from '../../../src/render/types.ts';
import { type SourceRepo, sourceRepository } from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

class CountingRenderer extends Renderer {
  readonly rendered: string[] = [];
  override render(job: RenderJob): Promise<RenderResult> {
    this.rendered.push(job.source);
    return super.render(job);
  }
}

const policy = repositoryPolicy({
  defaultNamespace: 'shop',
  allowedNamespaces: 'shop',
  allowedServiceAccounts: 'deployer',
});

const source = (name: string, path: string, more: Record<string, unknown> = {}) => ({
  [`sources/${name}.yaml`]: stringify({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Source',
    metadata: { name, namespace: 'shop' },
    spec: { path, kustomize: {}, serviceAccountName: 'deployer', prune: true, ...more },
  }),
});
const cm = (name: string, value: string) =>
  stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { value } });

function files(shared: string, timeout: string): Record<string, string> {
  return {
    ...source('web', 'deploy/web', { timeout }),
    'deploy/web/kustomization.yaml': stringify({ resources: ['../shared', 'web.yaml'] }),
    'deploy/web/web.yaml': cm('web', 'one'),
    'deploy/shared/kustomization.yaml': stringify({ resources: ['shared.yaml'] }),
    'deploy/shared/shared.yaml': cm('shared', shared),
    ...source('api', 'deploy/api'),
    'deploy/api/kustomization.yaml': stringify({ resources: ['api.yaml'] }),
    'deploy/api/api.yaml': cm('api', 'one'),
  };
}

let repo: SourceRepo;
let renderer: CountingRenderer;

beforeAll(async () => {
  repo = await sourceRepository();
  const tools = renderTools();
  renderer = new CountingRenderer({ tools });
});
afterAll(() => renderer.stop());

describe('janus plan --base, without a cluster', () => {
  it('renders every source once at each commit and plans the one whose render changes, from a file outside its folder', {
    timeout: 120_000,
  }, async () => {
    const base = await repo.commit(files('one', '30m'));
    // web reads deploy/shared; its declaration's timeout changes too, which renders nothing else.
    const head = await repo.commit(files('two', '10m'));
    const rendered = await renderSourcesAtBoth(
      { repository: repo.dir, base, head: 'HEAD', root: 'sources', policy },
      renderer,
      undefined,
    );
    expect(rendered).toMatchObject({ base, head, problems: [] });
    expect(renderer.rendered.sort()).toEqual(['shop/api', 'shop/api', 'shop/web', 'shop/web']);
    const plans = await planSources(rendered, {
      repository: repo.dir,
      branch: 'main',
      objects: undefined,
      plan: undefined,
    });
    expect(plans.map((p) => [p.source?.name, p.source?.verdict, p.name])).toEqual([
      ['web', 'transaction', `web-${head.slice(0, 7)}`],
    ]);
    expect(plans[0]?.source?.comparedWith).toBe('base');

    // Only the declaration's timeout: nothing rendered changes, nothing is planned.
    const same = await repo.commit(files('two', '5m'));
    const again = await renderSourcesAtBoth(
      { repository: repo.dir, base: head, head: same, root: 'sources', policy },
      renderer,
      undefined,
    );
    expect(
      await planSources(again, { repository: repo.dir, branch: 'main', objects: undefined, plan: undefined }),
    ).toEqual([]);
  });

  it('refuses a revision the clone does not have, naming the flag', async () => {
    await expect(
      renderSourcesAtBoth(
        { repository: repo.dir, base: 'origin/nowhere', head: 'HEAD', root: 'sources', policy },
        renderer,
        undefined,
      ),
    ).rejects.toThrow(/^--base origin\/nowhere: no such commit in this clone/);
  });
});
