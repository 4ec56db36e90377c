import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedBuild, binarySource as sourceOf } from '../../../src/cli/demo/built-tools.ts';
import { CONTROL_PLANE } from '../../../src/cli/demo/control-plane-binaries.ts';
import { RENDER_TOOLS } from '../../../src/cli/demo/render-tools.ts';

const binarySource = (facts: Parameters<typeof sourceOf>[1], env: NodeJS.ProcessEnv) =>
  sourceOf(CONTROL_PLANE, facts, env);
const cachedBinaries = (env: NodeJS.ProcessEnv) => cachedBuild(CONTROL_PLANE, env);

const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

describe('where the demo gets the control plane binaries', () => {
  let cache: string;
  const env = () => ({ JANUS_CACHE_DIR: cache });

  async function build(hash: string, { complete = true, ageSeconds = 0 } = {}): Promise<string> {
    const bin = join(cache, 'kube-testenv', hash, 'bin');
    await mkdir(bin, { recursive: true });
    for (const name of BINARIES) await writeFile(join(bin, name), '');
    if (complete) await writeFile(join(bin, '.complete'), '');
    const when = new Date(Date.now() - ageSeconds * 1000);
    await utimes(bin, when, when);
    return bin;
  }

  beforeEach(async () => {
    cache = await mkdtemp(join(tmpdir(), 'janus-binaries-'));
  });
  afterEach(() => rm(cache, { recursive: true, force: true }));

  it('runs build.sh when the script and Go are there', () => {
    expect(binarySource({ buildScript: true, go: true, cached: undefined }, env())).toEqual({ build: true });
  });

  it('otherwise takes the newest complete build in the cache', async () => {
    await build('old', { ageSeconds: 3600 });
    const newest = await build('new');
    await build('partial', { complete: false });
    const cached = cachedBinaries(env());
    expect(cached).toBe(newest);
    expect(binarySource({ buildScript: false, go: false, cached }, env())).toEqual({
      build: false,
      binDir: newest,
    });
  });

  it('names the folder and the command when there is no build (a copy without test/)', () => {
    expect(cachedBinaries(env())).toBeUndefined();
    const source = binarySource({ buildScript: false, go: true, cached: undefined }, env());
    expect(source).toEqual({ missing: expect.stringContaining(join(cache, 'kube-testenv', '<hash>/bin')) });
    expect(source).toEqual({ missing: expect.stringContaining('npm run kube:build') });
  });

  it('asks for Go when the script is there but Go is not', () => {
    const source = binarySource({ buildScript: true, go: false, cached: undefined }, env());
    expect(source).toEqual({ missing: expect.stringMatching(/install Go, then run `npm run kube:build`/) });
  });
});

describe('where janus demo --sources gets kustomize and helm', () => {
  let cache: string;
  beforeEach(async () => {
    cache = await mkdtemp(join(tmpdir(), 'janus-render-tools-'));
  });
  afterEach(() => rm(cache, { recursive: true, force: true }));

  it("takes the tests' build in the cache (render-tools/<hash>/bin), only when it has both tools", async () => {
    const env = { JANUS_CACHE_DIR: cache };
    const bin = join(cache, 'render-tools', 'abc', 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'kustomize'), '');
    await writeFile(join(bin, '.complete'), '');
    expect(cachedBuild(RENDER_TOOLS, env)).toBeUndefined();
    await writeFile(join(bin, 'helm'), '');
    expect(cachedBuild(RENDER_TOOLS, env)).toBe(bin);
    expect(
      cachedBuild(RENDER_TOOLS, { ...env, JANUS_RENDER_TOOLS_BIN: join(cache, 'elsewhere') }),
    ).toBeUndefined();
  });

  it('names the folder and build-render-tools.sh when there is none, and no --kubeconfig way round', () => {
    const source = sourceOf(
      RENDER_TOOLS,
      { buildScript: true, go: false, cached: undefined },
      { JANUS_CACHE_DIR: cache },
    );
    expect(source).toEqual({
      missing: expect.stringContaining(
        `the render tools of sources (kustomize, helm) are not in ${join(cache, 'render-tools')}/<hash>/bin: install Go, then run \`npm run render-tools:build\``,
      ),
    });
    expect(source).not.toEqual({ missing: expect.stringContaining('--kubeconfig') });
  });
});
