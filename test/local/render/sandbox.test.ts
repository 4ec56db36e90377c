/**
 * Every way out of the sandbox a pusher could try, refused (docs/sources.md, "The sandbox"), with
 * the real kustomize and helm: remote bases (https and the GitHub shorthand), `../` out of the
 * checkout, a symlink out of it, /etc/passwd, exec plugins and KRM functions, a chart dependency
 * from a chart repository, a render that loops (time), one of 1 GiB (output), one that eats
 * memory; and what the tool's process gets: no environment of Janus's, a closed proxy, no PATH,
 * an address-space limit.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateFolder } from '../../../src/render/checkout.ts';
import { addressSpaceLimit, DEFAULT_RENDER_LIMITS } from '../../../src/render/limits.ts';
import { Renderer } from '../../../src/render/renderer.ts';
import { CLOSED_PROXY, runSandboxed } from '../../../src/render/sandbox.ts';
import type { RenderFailure, RenderRequest, RenderResult } from '../../../src/render/types.ts';
import { eventually } from '../../support/eventually.ts';
import {
  CONFIG_MAP,
  helmRequest,
  renderAt,
  type SourceRepo,
  sourceRepository,
} from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

const KUSTOMIZE: RenderRequest = { path: 'app', method: { kind: 'kustomize' }, namespace: 'shop' };
const CHART = helmRequest('chart');
const CM = CONFIG_MAP;

let repo: SourceRepo;
let renderer: Renderer;

beforeAll(async () => {
  repo = await sourceRepository();
  renderer = new Renderer({ tools: renderTools() });
});
afterAll(() => renderer.stop());

function failure(result: RenderResult): RenderFailure {
  if (result.ok) throw new Error(`expected a failure, got ${result.objects.length} objects`);
  return result.failure;
}

/** A kustomization at app/ (plus `files`), rendered. */
async function kustomize(kustomization: string, files: Record<string, string | { symlink: string }> = {}) {
  const commit = await repo.commit({ 'app/kustomization.yaml': kustomization, 'app/cm.yaml': CM, ...files });
  return renderAt(renderer, repo, commit, KUSTOMIZE);
}

/** A chart at chart/ with one template, rendered with `limits`. */
async function chart(
  template: string,
  limits = DEFAULT_RENDER_LIMITS,
  chartYaml = 'apiVersion: v2\nname: c\nversion: 0.1.0\n',
) {
  const commit = await repo.commit({ 'chart/Chart.yaml': chartYaml, 'chart/templates/t.yaml': template });
  const bounded = new Renderer({ tools: renderTools(), limits });
  try {
    return await renderAt(bounded, repo, commit, CHART);
  } finally {
    bounded.stop();
  }
}

describe('the render sandbox refuses', () => {
  it('a remote base by URL and by GitHub shorthand, before kustomize runs', async () => {
    for (const remote of [
      'https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.8.2',
      'github.com/kubernetes-sigs/kustomize/examples/helloWorld?ref=v5.8.2',
      'git@github.com:kubernetes-sigs/kustomize.git//examples/helloWorld',
    ]) {
      expect(failure(await kustomize(`resources:\n- cm.yaml\n- ${remote}\n`))).toMatchObject({
        tool: 'janus',
        bound: 'input',
        file: 'app/kustomization.yaml',
        line: 3,
        message: expect.stringContaining(`resources[1] "${remote}": a remote reference`),
      });
    }
  });

  it('a path out of the checkout, to its parent or to /etc/passwd', async () => {
    expect(failure(await kustomize('resources:\n- ../../home\n'))).toMatchObject({
      bound: 'input',
      message: expect.stringContaining('resources[0] "../../home": leads out of the repository checkout'),
    });
    expect(
      failure(await kustomize('configMapGenerator:\n- name: x\n  files: [/etc/passwd]\n')),
    ).toMatchObject({
      bound: 'input',
      line: 3,
      message: expect.stringContaining('configMapGenerator[0].files[0] "/etc/passwd": an absolute path'),
    });
    expect(
      failure(
        await kustomize(
          'configMapGenerator:\n- name: x\n  files: [passwd=../../../../../../../etc/passwd]\n',
        ),
      ),
    ).toMatchObject({
      bound: 'input',
      message: expect.stringContaining('leads out of the repository checkout'),
    });
    const values = failure(
      await renderAt(
        renderer,
        repo,
        await repo.commit({ 'chart/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n' }),
        helmRequest('chart', { valuesFiles: ['../../etc/passwd'] }),
      ),
    );
    expect(values).toMatchObject({
      bound: 'input',
      message: expect.stringContaining('leads out of the repository checkout'),
    });
  });

  it("and kustomize's own load restrictor refuses a file out of the kustomization's folder, should a check ever miss one", async () => {
    const checkout = await privateFolder(async (root) => {
      await mkdir(join(root, 'app'));
      await writeFile(
        join(root, 'app/kustomization.yaml'),
        'configMapGenerator:\n- name: x\n  files: [../secret.txt]\n',
      );
      await writeFile(join(root, 'secret.txt'), 'not for the render\n');
    });
    try {
      const outcome = await runSandboxed({
        program: renderTools().kustomize,
        args: ['build', './app', '--load-restrictor', 'LoadRestrictionsRootOnly'],
        cwd: checkout.root,
        home: checkout.home,
        limits: DEFAULT_RENDER_LIMITS,
      });
      expect(outcome.ok).toBe(false);
      expect(outcome.ok ? '' : outcome.stderr).toMatch(/security; file '.*secret.txt' is not in or below/);
    } finally {
      await checkout.remove();
    }
  });

  it('a symlink out of the checkout, wherever it is, and follows one within it as a copy', async () => {
    for (const target of ['/etc/passwd', '../../../../etc/passwd']) {
      expect(
        failure(await kustomize('resources:\n- cm.yaml\n', { 'other/passwd.yaml': { symlink: target } })),
      ).toMatchObject({
        tool: 'janus',
        bound: 'input',
        file: 'other/passwd.yaml',
        message: expect.stringContaining('outside the checkout'),
      });
    }
    const linked = await kustomize('resources:\n- linked.yaml\n', {
      'shared/cm.yaml': CM,
      'app/linked.yaml': { symlink: '../shared/cm.yaml' },
    });
    expect(linked.ok && linked.objects.map((o) => o.metadata.name)).toEqual(['cm']);
    expect(
      failure(
        await kustomize('resources:\n- cm.yaml\n', {
          'shared/cm.yaml': CM,
          'app/dir-link': { symlink: '../shared' },
        }),
      ),
    ).toMatchObject({
      file: 'app/dir-link',
      message: expect.stringContaining('a folder'),
    });
  });

  it('an exec KRM function, a container function and an external plugin', async () => {
    const fn = (annotation: string) =>
      `apiVersion: example.com/v1\nkind: Evil\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: |\n      ${annotation}\n`;
    for (const [field, config] of [
      ['transformers', fn('exec: {path: ../run.sh}')],
      ['generators', fn('container: {image: registry.example/evil:v1}')],
    ] as const) {
      expect(
        failure(await kustomize(`resources: [cm.yaml]\n${field}:\n- fn.yaml\n`, { 'app/fn.yaml': config })),
      ).toMatchObject({
        bound: 'input',
        file: 'app/fn.yaml',
        message: expect.stringContaining('a KRM function'),
      });
    }
    expect(
      failure(
        await kustomize(
          'resources: [cm.yaml]\nvalidators:\n- |\n  apiVersion: someteam.example.com/v1\n  kind: ChartInflator\n  metadata: {name: x}\n',
        ),
      ),
    ).toMatchObject({ bound: 'input', line: 3, message: expect.stringContaining('an external plugin') });
    expect(
      failure(await kustomize('helmCharts:\n- name: x\n  repo: https://charts.example\n')),
    ).toMatchObject({ bound: 'input', line: 1, message: expect.stringContaining('--enable-helm') });
  });

  it('a chart dependency from a chart repository or an OCI registry that is not vendored', async () => {
    for (const repository of ['https://charts.example/stable', 'oci://registry.example/charts']) {
      const result = await chart(
        CM,
        DEFAULT_RENDER_LIMITS,
        `apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n- name: db\n  version: 1.0.0\n  repository: ${repository}\n`,
      );
      expect(failure(result)).toMatchObject({
        bound: 'input',
        file: 'chart/Chart.yaml',
        line: 5,
        message: expect.stringContaining(`"db" from ${repository} is not vendored in chart/charts/`),
      });
    }
  });

  it('a render that loops: killed at the time bound', async () => {
    const result = await chart(`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}${CM}`, {
      ...DEFAULT_RENDER_LIMITS,
      timeoutMs: 2000,
    });
    expect(failure(result)).toMatchObject({
      tool: 'helm',
      bound: 'time',
      message: expect.stringContaining('longer than 2 s'),
    });
  });

  it('a render of 1 GiB: killed (helm holds a render in memory before it writes it: the memory bound comes first)', async () => {
    const line = 'x'.repeat(100);
    const result = await chart(
      `${CM}data:\n{{- range $i := until 10000000 }}\n  k{{ $i }}: ${line}{{ end }}\n`,
    );
    expect(failure(result)).toMatchObject({
      tool: 'helm',
      bound: expect.stringMatching(/^(memory|output)$/),
    });
  });

  it('a render of 18 MiB, within the memory bound: killed past the output bound', async () => {
    const line = 'x'.repeat(100);
    const result = await chart(
      `${CM}data:\n{{- range $i := until 170000 }}\n  k{{ $i }}: ${line}{{ end }}\n`,
    );
    expect(failure(result)).toMatchObject({
      tool: 'helm',
      bound: 'output',
      message: expect.stringContaining('more than 16 MiB'),
    });
  });

  it('a render that takes memory without writing it: killed at the memory bound', async () => {
    // A string doubled 26 times: 1 GiB, whose length only is written.
    const result = await chart(
      `{{ $s := "0123456789abcdef" }}{{ range until 26 }}{{ $s = print $s $s }}{{ end }}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x{{ len $s }}\n`,
    );
    expect(failure(result)).toMatchObject({
      tool: 'helm',
      bound: 'memory',
      message: expect.stringContaining('512 MiB'),
    });
  });
});

describe("the tool's process", () => {
  it('is killed with everything it left behind in its process group, without waiting for the time bound', async () => {
    const home = await mkdtemp(join(tmpdir(), 'janus-sandbox-group-'));
    try {
      const outcome = await runSandboxed({
        program: '/bin/sh',
        args: ['-c', '/bin/sleep 600 & echo $!'],
        cwd: home,
        home,
        limits: { ...DEFAULT_RENDER_LIMITS, timeoutMs: 600_000 },
      });
      expect(outcome.ok).toBe(true);
      const leftover = Number(outcome.ok ? outcome.stdout.toString('utf8').trim() : Number.NaN);
      expect(leftover).toBeGreaterThan(0);
      await eventually(() =>
        expect(
          existsSync(`/proc/${leftover}/cmdline`) &&
            readFileSync(`/proc/${leftover}/cmdline`, 'utf8').includes('sleep'),
        ).toBe(false),
      );
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("gets none of Janus's environment: no cluster, no credentials, a closed proxy, nothing on its PATH, an address-space limit", async () => {
    const home = await mkdtemp(join(tmpdir(), 'janus-sandbox-env-'));
    const saved = { ...process.env };
    Object.assign(process.env, {
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBECONFIG: '/root/.kube/config',
      JANUS_GIT_TOKEN: 'secret-token',
      SSH_AUTH_SOCK: '/tmp/agent.sock',
    });
    try {
      const run = (program: string, args: string[]) =>
        runSandboxed({ program, args, cwd: home, home, limits: DEFAULT_RENDER_LIMITS });
      const env = await run('/usr/bin/env', []);
      expect(env.ok).toBe(true);
      const lines = env.ok ? env.stdout.toString('utf8').trim().split('\n') : [];
      const names = lines.map((l) => l.slice(0, l.indexOf('=')));
      for (const leaked of [
        'KUBERNETES_SERVICE_HOST',
        'KUBECONFIG',
        'JANUS_GIT_TOKEN',
        'SSH_AUTH_SOCK',
        'GIT_ASKPASS',
      ])
        expect(names).not.toContain(leaked);
      expect(lines).toEqual(
        expect.arrayContaining([
          `HOME=${home}`,
          `HTTPS_PROXY=${CLOSED_PROXY}`,
          `https_proxy=${CLOSED_PROXY}`,
          'NO_PROXY=',
          `PATH=${join(home, 'empty-path')}`,
          `GOMEMLIMIT=${DEFAULT_RENDER_LIMITS.memoryBytes}`,
        ]),
      );
      const limits = await run('/bin/cat', ['/proc/self/limits']);
      const addressSpace = limits.ok
        ? /^Max address space\s+(\d+)\s+(\d+)/m.exec(limits.stdout.toString('utf8'))
        : null;
      // Soft and hard alike: the tool cannot raise it.
      expect(addressSpace?.slice(1).map(Number)).toEqual([
        addressSpaceLimit(DEFAULT_RENDER_LIMITS.memoryBytes),
        addressSpaceLimit(DEFAULT_RENDER_LIMITS.memoryBytes),
      ]);
      // No git, no shell, nothing found by name.
      const which = await run('/bin/sh', ['-c', 'command -v git || command -v sh || echo none']);
      expect(which.ok && which.stdout.toString('utf8').trim()).toBe('none');
    } finally {
      process.env = saved;
      await rm(home, { recursive: true, force: true });
    }
  });
});
