/**
 * examples/sources, as janus demo --sources commits it, passes `janus validate` with the real
 * kustomize at each of its three commits: the Source read as janus run reads it, the overlay
 * rendered offline in the sandbox, every object within the demo's policy.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { janus } from '../../support/processes/cli.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

const EXAMPLES = join(REPO_ROOT, 'examples');
// The policy janus demo --sources runs with (src/cli/demo/stage.ts).
const POLICY = ['--default-namespace', 'shop', '--allowed-namespaces', 'shop'];
const ACCOUNTS = ['--allowed-service-accounts', 'shop/deployer'];

describe('examples/sources', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), 'janus-examples-sources-'));
    await cp(join(EXAMPLES, 'sources'), repo, { recursive: true });
  });
  afterAll(() => rm(repo, { recursive: true, force: true }));

  it('renders within the policy at commit 1, then with sources-release-2, then with sources-release-3', async () => {
    const tools = renderTools();
    const flags = [...POLICY, ...ACCOUNTS, '--kustomize-path', tools.kustomize, '--helm-path', tools.helm];
    for (const later of [undefined, 'sources-release-2', 'sources-release-3']) {
      if (later) await cp(join(EXAMPLES, later), repo, { recursive: true });
      const result = await janus(['validate', repo, ...flags, '-o', 'json']);
      expect(result.code, `${later ?? 'commit 1'}: ${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout).sources).toEqual([
        { file: 'sources/shop.yaml', name: 'shop', namespace: 'shop', ok: true, objects: 3, diagnostics: [] },
      ]);
    }
  });
});
