/**
 * `janus demo` from the compiled entry point in a copy of Janus without test/ (a package, an
 * unpacked release): it stands on product code, so it does not fail to load a module; with no
 * control plane built in its cache it says where it looked and how to build one (exit 2).
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

  it('names the missing binaries, their folder and the command that builds them', () => {
    const cache = join(copy, 'cache');
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('JANUS_')));
    const result = spawnSync(process.execPath, [join(copy, SHIPPED_MAIN), 'demo'], {
      cwd: copy,
      env: { ...env, JANUS_CACHE_DIR: cache },
      encoding: 'utf8',
    });
    expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module/);
    expect(result.stderr).toContain('janus: cannot run the demo:');
    expect(result.stderr).toContain(`are not in ${join(cache, 'kube-testenv')}/<hash>/bin`);
    expect(result.stderr).toContain('npm run kube:build');
    expect(result.status).toBe(2);
  });
});
