/**
 * A Kustomize overlay as a source, rendered by the real kustomize in `janus run`, on a control
 * plane with workload controllers and kwok nodes: a base, a component, patches, replacements, an
 * image override and a configMapGenerator. Commit 1 applies it; commit 2 changes the image and
 * the generated ConfigMap (so its hashed name) and is one Transaction: the new ConfigMap created,
 * the Deployment rolled out and gated, the old ConfigMap pruned, Committed.
 */
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { createTestRepo, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  attempted,
  declaration,
  SOURCE_DEPLOYER,
  sourceFlags,
  sourceTransactions,
  untilSource,
  yamlDocuments,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-kustomize');
const git = useGitServer();
const janus = useJanus(clients);

function overlay(tag: string, color: string): Record<string, string> {
  return {
    'deploy/base/kustomization.yaml': yamlDocuments({
      resources: ['deployment.yaml', 'service.yaml'],
      configMapGenerator: [{ name: 'web-env', literals: [`COLOR=${color}`] }],
    }),
    'deploy/base/deployment.yaml': yamlDocuments({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [{ name: 'app', image: 'web', envFrom: [{ configMapRef: { name: 'web-env' } }] }],
          },
        },
      },
    }),
    'deploy/base/service.yaml': yamlDocuments({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    }),
    'deploy/components/team/kustomization.yaml': yamlDocuments({
      apiVersion: 'kustomize.config.k8s.io/v1alpha1',
      kind: 'Component',
      labels: [{ pairs: { team: 'shop' } }],
    }),
    'deploy/overlays/prod/settings.yaml': yamlDocuments({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: { tier: 'frontend' },
    }),
    'deploy/overlays/prod/kustomization.yaml': yamlDocuments({
      resources: ['../../base', 'settings.yaml'],
      components: ['../../components/team'],
      images: [{ name: 'web', newName: 'registry.example/web', newTag: tag }],
      patches: [
        {
          target: { kind: 'Deployment', name: 'web' },
          patch: yamlDocuments([{ op: 'replace', path: '/spec/replicas', value: 2 }]),
        },
      ],
      replacements: [
        {
          source: { kind: 'ConfigMap', name: 'settings', fieldPath: 'data.tier' },
          targets: [
            {
              select: { kind: 'Deployment', name: 'web' },
              fieldPaths: ['metadata.labels.tier'],
              options: { create: true },
            },
          ],
        },
      ],
      configMapGenerator: [{ name: 'web-env', behavior: 'merge', literals: ['REGION=eu'] }],
    }),
  };
}

describe('a Kustomize overlay as a source', () => {
  it('applies commit 1, then commit 2 (new image, new generated ConfigMap, the old one pruned) as one transaction', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags(), logLevel: 'info' });

    const first = await repo.push({
      ...declaration('web', ns.name, {
        path: 'deploy/overlays/prod',
        kustomize: {},
        prune: true,
        health: { timeout: '3m' },
      }),
      ...overlay('v1', 'blue'),
    });
    const txn1 = await waitForPhase(clients.admin, ns.name, `web-${first.slice(0, 7)}`, 'Committed', 240_000);
    const generated1 = txn1.spec.changes.find((c) => c.target.name.startsWith('web-env-'))?.target.name;
    expect(txn1.spec.changes.map((c) => `${c.type} ${c.target.kind}`)).toEqual([
      'Apply ConfigMap',
      'Apply ConfigMap',
      'Apply Service',
      'Apply Deployment',
    ]);
    const web = await availableWith(clients.admin, ns.name, 'web', POD_IMAGES.ready);
    const deployed = await clients.admin.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns.name,
      name: 'web',
    });
    expect(deployed.metadata.labels).toMatchObject({ app: 'web', team: 'shop', tier: 'frontend' });
    expect(web.replicas).toBe(2);
    const env1 = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns.name,
      name: generated1 ?? '',
    });
    expect(env1.data).toEqual({ COLOR: 'blue', REGION: 'eu' });
    await untilSource(clients.admin, ns.name, 'web', attempted(first, 'Committed'));

    const second = await repo.push(overlay('v2', 'green'));
    const txn2 = await waitForPhase(
      clients.admin,
      ns.name,
      `web-${second.slice(0, 7)}`,
      'Committed',
      240_000,
    );
    const generated2 = txn2.spec.changes.find(
      (c) => c.type === 'Apply' && c.target.name.startsWith('web-env-'),
    )?.target.name;
    expect(generated2).not.toBe(generated1);
    expect(txn2.spec.changes.map((c) => `${c.type} ${c.target.kind} ${c.target.name}`)).toEqual([
      `Apply ConfigMap ${generated2}`,
      'Apply Deployment web',
      `Delete ConfigMap ${generated1}`,
    ]);
    await availableWith(clients.admin, ns.name, 'web', POD_IMAGES.readyAlternative);
    expect(
      await clients.admin.find({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: ns.name,
        name: generated1 ?? '',
      }),
    ).toBeUndefined();
    const source = await untilSource(clients.admin, ns.name, 'web', attempted(second, 'Committed'));
    expect(source.status?.lastApplied?.revision).toBe(second);
    expect(source.status?.inventory?.map((e) => e.name).sort()).toEqual(
      [generated2, 'settings', 'web', 'web'].sort(),
    );
    expect((await sourceTransactions(clients.admin, ns.name, 'web')).length).toBe(2);
    await recordedPhase(repo, ns.name, txn2.metadata.name, 'Committed');
  });
});
