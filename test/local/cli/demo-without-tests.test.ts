/**
 * `janus demo` from the compiled entry point in a copy of Janus without test/ (a package, an
 * unpacked release): it stands on product code, so it does not fail to load a module; with no
 * control plane built in its cache (or, with --sources, no kustomize and helm) it says where it
 * looked and how to build them (exit 2).
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { SHIPPED_MAIN } from '../../support/processes/build.ts';

describe('janus demo without test/', () => {
  let copy: string;

  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), 'janus-no-tests-'));
    // dist/ is compiled by the local tier's global setup; copied, not linked, so that
    // the program finds its checkout (examples/, manifests/) in the copy.
    for (const entry of ['dist', 'examples', 'manifests', 'package.json']) {
      await cp(join(REPO_ROOT, entry), join(copy, entry), { recursive: true });
    }
    await mkdir(join(copy, 'src/cli/demo'), { recursive: true });
    await cp(join(REPO_ROOT, 'src/cli/demo/kwok-stages.yaml'), join(copy, 'src/cli/demo/kwok-stages.yaml'));
    await symlink(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'));
  });
  afterAll(() => rm(copy, { recursive: true, force: true }));

  function demo(...args: string[]) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('JANUS_')));
    return spawnSync(process.execPath, [join(copy, SHIPPED_MAIN), 'demo', ...args], {
      cwd: copy,
      env: { ...env, JANUS_CACHE_DIR: join(copy, 'cache') },
      encoding: 'utf8',
    });
  }

  it('names the missing binaries, their folder and the command that builds them', () => {
    const cache = join(copy, 'cache');
    const result = demo();
    expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module/);
    expect(result.stderr).toContain('janus: cannot run the demo:');
    expect(result.stderr).toContain(`are not in ${join(cache, 'kube-testenv')}/<hash>/bin`);
    expect(result.stderr).toContain('npm run kube:build');
    expect(result.status).toBe(2);
  });

  it('with --sources on an existing cluster, names the missing kustomize and helm, their folder and their build', () => {
    const result = demo('--sources', '--kubeconfig', join(copy, 'no-such-kubeconfig'));
    expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module/);
    expect(result.stderr).toContain(
      `the render tools of sources (kustomize, helm) are not in ${join(copy, 'cache', 'render-tools')}/<hash>/bin`,
    );
    expect(result.stderr).toContain('npm run render-tools:build');
    expect(result.stderr).not.toContain('kube-testenv/<hash>/bin');
    expect(result.status).toBe(2);
  });
});
