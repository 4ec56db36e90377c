import { describe, expect, it } from 'vitest';
import { checkKustomizations } from '../../../src/render/kustomize-precheck.ts';
import { MAX_CONFIG_BYTES } from '../../../src/render/references.ts';
import { memoryView } from './memory-view.ts';

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n';
const BASE = { 'base/kustomization.yaml': 'resources: [cm.yaml]\n', 'base/cm.yaml': CM };

const check = (overlay: string, files: Record<string, string> = {}, named?: Set<string>) =>
  checkKustomizations(
    memoryView({ ...BASE, 'app/cm.yaml': CM, 'app/kustomization.yaml': overlay, ...files }),
    'app',
    named,
  );

describe('the Kustomize pre-check', () => {
  it('accepts an overlay whose every path stays in the checkout, following bases and components', () => {
    const overlay = `resources: [../base, cm.yaml]
components: [../components/extra]
patches:
- path: patch.yaml
- patch: |-
    - op: add
      path: /x
      value: 1
patchesStrategicMerge:
- |
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: x}
configMapGenerator:
- name: settings
  files: [app.properties, key=other.txt]
  envs: [app.env]
replacements:
- path: r.yaml
openapi: {path: schema.json}
transformers: [builtin.yaml]
`;
    const named = new Set<string>();
    expect(
      check(
        overlay,
        {
          'components/extra/kustomization.yaml': 'kind: Component\nresources: [cm.yaml]\n',
          'components/extra/cm.yaml': CM,
          'app/patch.yaml': CM,
          'app/app.properties': 'a=1\n',
          'app/other.txt': 'x',
          'app/app.env': 'A=1\n',
          'app/r.yaml': '- source: {kind: ConfigMap}\n',
          'app/schema.json': '{}',
          'app/builtin.yaml':
            'apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata: {name: p}\nprefix: a-\n',
        },
        named,
      ),
    ).toBeUndefined();
    // Every file the kustomizations name: what a render decrypts when it is SOPS-encrypted.
    expect([...named].sort()).toEqual([
      'app/app.env',
      'app/app.properties',
      'app/builtin.yaml',
      'app/cm.yaml',
      'app/other.txt',
      'app/patch.yaml',
      'app/r.yaml',
      'app/schema.json',
      'base/cm.yaml',
      'components/extra/cm.yaml',
    ]);
  });

  it('needs a kustomization in the source folder', () => {
    expect(checkKustomizations(memoryView(BASE), 'app')).toMatchObject({
      file: 'app',
      message: expect.stringContaining('no kustomization.yaml'),
    });
  });

  it.each([
    'https://github.com/org/repo//deploy?ref=v1',
    'github.com/org/repo/deploy?ref=main',
    'git@github.com:org/repo.git',
    'git::https://example.com/repo.git',
    'ssh://git@example.com/repo.git',
    'file:///etc',
    'gitlab.com/org/repo',
    'deploy?ref=main',
  ])('refuses the remote reference %s, naming the file, line and entry', (remote) => {
    expect(check(`resources:\n- cm.yaml\n- ${remote}\n`)).toEqual({
      file: 'app/kustomization.yaml',
      line: 3,
      message: `resources[1] ${JSON.stringify(remote)}: a remote reference; a render reads the repository only (vendor it into the repository)`,
    });
  });

  it('refuses a path that is not in the repository but looks like a host', () => {
    expect(check('resources: [example.com/org/base]\n')?.message).toContain(
      'if it is a remote reference, vendor it',
    );
  });

  it.each([
    ['resources: [../../x]', 'resources[0] "../../x": leads out of the repository checkout'],
    ['bases: [/etc]', 'bases[0] "/etc": an absolute path'],
    ['components: [../../../c]', 'components[0] "../../../c": leads out'],
    ['crds: [../../crd.yaml]', 'crds[0] "../../crd.yaml": leads out'],
    ['configurations: [/tmp/c.yaml]', 'configurations[0] "/tmp/c.yaml": an absolute path'],
    ['patches: [{path: ../../p.yaml}]', 'patches[0].path "../../p.yaml": leads out'],
    [
      'patchesJson6902: [{path: /p.yaml, target: {kind: X}}]',
      'patchesJson6902[0].path "/p.yaml": an absolute path',
    ],
    ['patchesStrategicMerge: [../../p.yaml]', 'patchesStrategicMerge[0] "../../p.yaml": leads out'],
    ['replacements: [{path: ../../r.yaml}]', 'replacements[0].path "../../r.yaml": leads out'],
    ['openapi: {path: /schema.json}', 'openapi.path "/schema.json": an absolute path'],
    [
      'configMapGenerator: [{name: x, files: [k=../../../etc/passwd]}]',
      'configMapGenerator[0].files[0] "../../../etc/passwd": leads out',
    ],
    [
      'secretGenerator: [{name: x, envs: [/etc/environment]}]',
      'secretGenerator[0].envs[0] "/etc/environment": an absolute path',
    ],
    ['secretGenerator: [{name: x, env: ../../.env}]', 'secretGenerator[0].env "../../.env": leads out'],
    [
      'resources: [missing.yaml]',
      'resources[0] "missing.yaml": no file or folder app/missing.yaml in the repository',
    ],
  ])('refuses %s', (overlay, message) => {
    const problem = check(`${overlay}\n`);
    expect(problem?.file).toBe('app/kustomization.yaml');
    expect(problem?.message).toContain(message);
  });

  it('refuses Helm charts, which need --enable-helm', () => {
    expect(check('resources: [cm.yaml]\nhelmCharts:\n- name: x\n')).toMatchObject({
      line: 2,
      message: expect.stringContaining('--enable-helm'),
    });
  });

  it('refuses KRM functions and external plugins, in a file or written inline; accepts built-ins', () => {
    const fn =
      'apiVersion: example.com/v1\nkind: F\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: "exec: {path: ./x}"\n';
    expect(check('transformers: [fn.yaml]\n', { 'app/fn.yaml': fn })).toMatchObject({
      file: 'app/fn.yaml',
      line: 6,
      message: expect.stringContaining(
        'transformers[0] (app/fn.yaml): a KRM function (config.kubernetes.io/function)',
      ),
    });
    expect(
      check('generators: [gen.yaml]\n', {
        'app/gen.yaml':
          'apiVersion: someteam.example.com/v1\nkind: SecretsFromDatabase\nmetadata: {name: g}\n',
      })?.message,
    ).toContain('an external plugin');
    expect(check('validators:\n- |\n  apiVersion: v1\n  kind: Exec\n  metadata: {name: v}\n')).toMatchObject({
      line: 2,
      message: expect.stringContaining('validators[0]: an external plugin'),
    });
    // A folder of plugin configurations is a kustomization, checked in turn.
    expect(
      check('transformers: [../plugins]\n', {
        'plugins/kustomization.yaml': 'resources: [https://example.com/x.yaml]\n',
      }),
    ).toMatchObject({ file: 'plugins/kustomization.yaml' });
  });

  it('checks every kustomization it reaches, once, even in a cycle', () => {
    expect(
      check('resources: [../base]\n', {
        'base/kustomization.yaml': 'resources: [../app, https://example.com/x]\n',
      }),
    ).toMatchObject({ file: 'base/kustomization.yaml', line: 1 });
    expect(
      check('resources: [../base]\n', { 'base/kustomization.yaml': 'resources: [../app]\n' }),
    ).toBeUndefined();
  });

  it('names a kustomization that is not YAML, with its line', () => {
    expect(check('resources:\n  - x: [\n')).toMatchObject({
      file: 'app/kustomization.yaml',
      line: expect.any(Number),
      message: expect.stringContaining('YAML syntax error'),
    });
  });

  it('reads kustomization.yml and Kustomization too', () => {
    const view = memoryView({
      'a/Kustomization': 'resources: [../b]\n',
      'b/kustomization.yml': 'resources: [/etc/passwd]\n',
    });
    expect(checkKustomizations(view, 'a')).toMatchObject({ file: 'b/kustomization.yml' });
  });

  it('refuses a kustomization or a plugin configuration of more than 1 MiB before parsing it (MAX_CONFIG_BYTES)', () => {
    // 1 MiB of `[],`: ~560 MB of the yaml library's heap had it been parsed.
    const dense = `resources: [cm.yaml]\nlabels: [${'[],'.repeat(MAX_CONFIG_BYTES / 3)}[]]\n`;
    expect(check(dense)).toEqual({
      file: 'app/kustomization.yaml',
      message: `app/kustomization.yaml is more than ${MAX_CONFIG_BYTES} bytes, more than a pre-check reads`,
    });
    expect(
      check('transformers: [big.yaml]\n', { 'app/big.yaml': `# ${'x'.repeat(MAX_CONFIG_BYTES)}\n` }),
    ).toMatchObject({
      file: 'app/big.yaml',
      message: expect.stringContaining('more than a pre-check reads'),
    });
  });
});
