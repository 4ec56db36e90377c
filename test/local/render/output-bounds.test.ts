/**
 * What a render's output costs Janus's own thread (docs/sources.md, "The sandbox"): the output is
 * read as objects on a thread of its own with the render's memory as its heap (output-thread.ts),
 * so 8 MiB of dense flow sequences from a chart (which took >4 GiB of the main heap, a fatal
 * out-of-memory at every commit) ends RenderFailed naming the bound, the main heap barely moving;
 * a plain folder's files are bounded by their sizes before any is read or decrypted, and a file
 * read as SOPS before its parse.
 */
import { getHeapStatistics } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Decryption } from '../../../src/render/decrypt-inputs.ts';
import { DEFAULT_RENDER_LIMITS } from '../../../src/render/limits.ts';
import { Renderer } from '../../../src/render/renderer.ts';
import type { RenderRequest } from '../../../src/render/types.ts';
import {
  CONFIG_MAP,
  helmRequest,
  renderAt,
  type SourceRepo,
  sourceRepository,
} from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

const MiB = 1024 * 1024;

let repo: SourceRepo;
let renderer: Renderer;

beforeAll(async () => {
  repo = await sourceRepository();
  renderer = new Renderer({ tools: renderTools() });
});
afterAll(() => renderer.stop());

/** The main thread's heap, its largest while `work` runs, less what it was before. */
async function heapGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const heap = () => Math.max(getHeapStatistics().used_heap_size, getHeapStatistics().total_heap_size);
  const before = heap();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, heap());
  }, 10);
  try {
    const result = await work();
    // A parse on this thread holds it all along: its heap is still grown when it returns.
    peak = Math.max(peak, heap());
    return { result, growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

const plain = (path: string): RenderRequest => ({
  path,
  namespace: 'shop',
  method: { kind: 'plain', recurse: false },
});

describe("a render's output", () => {
  it('of 8 MiB of flow sequences from a chart ends RenderFailed at the memory bound, the main heap growing by < 64 MiB', async () => {
    // 2.8 million empty sequences: `[[],[],…]`.
    const commit = await repo.commit({
      'chart/Chart.yaml': 'apiVersion: v2\nname: dense\nversion: 1.0.0\n',
      'chart/templates/dense.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dense\nitems: [{{ repeat ${Math.floor((8 * MiB) / 3)} "[]," }}[]]\n`,
    });
    const { result, growth } = await heapGrowth(() => renderAt(renderer, repo, commit, helmRequest('chart')));
    expect(result).toMatchObject({
      ok: false,
      failure: {
        tool: 'helm',
        bound: 'memory',
        message: expect.stringContaining(
          `needed more than ${DEFAULT_RENDER_LIMITS.memoryBytes / MiB} MiB of memory`,
        ),
      },
    });
    expect(growth).toBeLessThan(64 * MiB);
  }, 120_000);

  it("of ordinary objects is read on the thread and returned whole, the plain folder's file and line named on an error", async () => {
    const many = Array.from(
      { length: 2000 },
      (_, i) => `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  k: "${i}"\n`,
    ).join('');
    const commit = await repo.commit({
      'app/all.yaml': many,
      'broken/cm.yaml': `${CONFIG_MAP}data: [\n`,
    });
    const result = await renderAt(renderer, repo, commit, plain('app'));
    expect(result.ok && result.objects.length).toBe(2000);
    const broken = await renderAt(renderer, repo, commit, plain('broken'));
    expect(broken).toMatchObject({ ok: false, failure: { tool: 'janus', file: 'broken/cm.yaml', line: 6 } });
  });

  it("of a plain folder is bounded by its files' sizes before any is read or decrypted, and a file read as SOPS before its parse", async () => {
    const small = new Renderer({
      tools: renderTools(),
      limits: { ...DEFAULT_RENDER_LIMITS, maxOutputBytes: MiB },
    });
    let asked = 0;
    const decryption: Decryption = {
      identities: async () => {
        asked++;
        return [];
      },
    };
    try {
      // Two files of 600 KiB, each "encrypted": their sizes refuse them before either is parsed.
      const encryptedLooking = `${CONFIG_MAP}data:\n  k: "${'x'.repeat(600 * 1024)}"\nsops:\n  mac: ENC[x]\n`;
      const commit = await repo.commit({ 'app/a.yaml': encryptedLooking, 'app/b.yaml': encryptedLooking });
      const result = await small.render({
        source: 't/s',
        request: plain('app'),
        checkout: () => repo.checkout(commit),
        decryption,
      });
      expect(result).toMatchObject({
        ok: false,
        failure: {
          tool: 'janus',
          bound: 'output',
          file: 'app/b.yaml',
          message: expect.stringContaining(`more than ${MiB} bytes`),
        },
      });
      expect(asked).toBe(0);
      // A kustomization's file of 2 MiB that may be SOPS-encrypted: refused before it is parsed.
      const big = `${CONFIG_MAP}data:\n  k: "${'x'.repeat(2 * MiB)}"\nsops:\n  mac: ENC[x]\n`;
      const kustomized = await repo.commit({
        'k/kustomization.yaml': 'resources: [cm.yaml]\n',
        'k/cm.yaml': big,
      });
      const refused = await renderer.render({
        source: 't/k',
        request: { path: 'k', namespace: 'shop', method: { kind: 'kustomize' } },
        checkout: () => repo.checkout(kustomized),
        decryption,
      });
      expect(refused).toMatchObject({
        ok: false,
        failure: {
          tool: 'janus',
          file: 'k/cm.yaml',
          message: expect.stringContaining('may be SOPS-encrypted and is more than 1048576 bytes'),
        },
      });
      expect(asked).toBe(0);
    } finally {
      await small.stop();
    }
  });
});
