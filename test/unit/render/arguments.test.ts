import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helmArguments, kustomizeArguments } from '../../../src/render/render.ts';
import type { HelmRender } from '../../../src/render/types.ts';

const HELM: HelmRender = {
  kind: 'helm',
  releaseName: 'shop',
  valuesFiles: ['values.yaml', '../shared/prod.yaml'],
  values: { replicaCount: 3 },
  includeCRDs: true,
  hooks: 'Ignore',
  kubeVersion: '1.36.0',
  apiVersions: ['monitoring.coreos.com/v1'],
};

describe("the tools' arguments", () => {
  it('build a kustomization with the load restrictor at RootOnly and nothing enabled', () => {
    const args = kustomizeArguments('deploy/prod');
    expect(args).toEqual(['build', './deploy/prod', '--load-restrictor', 'LoadRestrictionsRootOnly']);
    expect(kustomizeArguments('')[1]).toBe('.');
    expect(args.join(' ')).not.toMatch(/--enable-|--network|--helm-command/);
  });

  it('render a chart client side only, values files then inline values, hooks as asked', async () => {
    const home = await mkdtemp(join(tmpdir(), 'janus-helm-args-'));
    try {
      const args = await helmArguments(
        { root: '/nowhere', home, remove: async () => {} },
        'charts/shop',
        'shop',
        HELM,
      );
      expect(args).toEqual([
        'template',
        'shop',
        './charts/shop',
        '--namespace',
        'shop',
        '--dry-run=client',
        '--include-crds',
        '--no-hooks',
        '--kube-version',
        '1.36.0',
        '--api-versions',
        'monitoring.coreos.com/v1',
        '--values',
        './charts/shop/values.yaml',
        '--values',
        './charts/shared/prod.yaml',
        '--values',
        join(home, 'inline-values.json'),
      ]);
      expect(JSON.parse(await readFile(join(home, 'inline-values.json'), 'utf8'))).toEqual({
        replicaCount: 3,
      });
      expect(args.join(' ')).not.toMatch(
        /--dry-run=server|--validate|--post-renderer|--enable-dns|--repo|--dependency-update/,
      );
      const include = await helmArguments({ root: '/nowhere', home, remove: async () => {} }, '', 'shop', {
        ...HELM,
        hooks: 'Include',
        includeCRDs: false,
        values: {},
        valuesFiles: [],
        kubeVersion: undefined,
        apiVersions: [],
      });
      expect(include).toEqual([
        'template',
        'shop',
        '.',
        '--namespace',
        'shop',
        '--dry-run=client',
        '--skip-tests',
      ]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
