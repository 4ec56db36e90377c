/**
 * A source's failing commit, end to end through `janus run`: a release whose pods crash-loop fails
 * the health gate, and the transaction puts every object back as the previous commit left it
 * (content; the pruned ConfigMap re-created, the new one gone); the Source stays at the previous
 * commit, records RolledBack, and does not try the same render again; the next good commit
 * applies. While a transaction runs, later commits wait; several pushed at once: the newest is
 * applied, the others (those that changed the source) are recorded Superseded.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { createTestRepo, morePolls, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  attempted,
  contentOf,
  declaration,
  pushTogether,
  SOURCE_DEPLOYER,
  sourceFlags,
  sourceTransactions,
  untilSource,
  yamlDocuments,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-rollback');
const git = useGitServer();
const janus = useJanus(clients);

interface Release {
  image: string;
  /** The generated ConfigMap's suffix and content. */
  env: { suffix: string; color: string };
  /** Commit 1 has a tier label and a FEATURE variable; later ones drop them. */
  legacy: boolean;
  mode: string;
}

function release(r: Release): Record<string, string> {
  const env = `web-env-${r.env.suffix}`;
  return {
    'deploy/web/objects.yaml': yamlDocuments(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { mode: r.mode } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: env }, data: { COLOR: r.env.color } },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', labels: { app: 'web', ...(r.legacy && { tier: 'frontend' }) } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: r.image,
                  envFrom: [{ configMapRef: { name: env } }],
                  ...(r.legacy && { env: [{ name: 'FEATURE', value: 'on' }] }),
                },
              ],
            },
          },
        },
      },
    ),
  };
}

const ref = (namespace: string, kind: string, name: string) => ({
  apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
  kind,
  namespace,
  name,
});

describe("a source's failing commit", () => {
  it('is rolled back to the previous render exactly; the source stays there until a commit changes the render', {
    timeout: 900_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags(),
      logLevel: 'info',
    });
    const spec = { path: 'deploy/web', plain: {}, prune: true, health: { timeout: '2m' } };
    const first = await repo.push({
      ...declaration('web', ns.name, spec),
      ...release({
        image: POD_IMAGES.ready,
        env: { suffix: 'aaaa1', color: 'blue' },
        legacy: true,
        mode: 'blue',
      }),
    });
    await untilSource(clients.admin, ns.name, 'web', attempted(first, 'Committed'));
    await availableWith(clients.admin, ns.name, 'web', POD_IMAGES.ready);
    const objects = [
      ref(ns.name, 'ConfigMap', 'settings'),
      ref(ns.name, 'ConfigMap', 'web-env-aaaa1'),
      ref(ns.name, 'Deployment', 'web'),
    ];
    const before = await Promise.all(objects.map((o) => clients.admin.find(o)));
    const inventory = (await untilSource(clients.admin, ns.name, 'web', () => {})).status?.inventory;

    // A release that crash-loops, a new generated ConfigMap (the old one pruned), a label and a variable dropped.
    const failing = await repo.push(
      release({
        image: POD_IMAGES.crashLoop,
        env: { suffix: 'bbbb2', color: 'green' },
        legacy: false,
        mode: 'green',
      }),
    );
    const name = `web-${failing.slice(0, 7)}`;
    const rolledBack = await waitForPhase(clients.admin, ns.name, name, 'RolledBack', 300_000);
    expect(rolledBack.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual([
      'Apply settings',
      'Apply web-env-bbbb2',
      'Apply web',
      'Delete web-env-aaaa1',
    ]);
    await availableWith(clients.admin, ns.name, 'web', POD_IMAGES.ready);
    const after = await Promise.all(objects.map((o) => clients.admin.find(o)));
    for (const [i, obj] of before.entries())
      expect(contentOf(after[i] as KubeObject), `${obj?.kind} ${obj?.metadata.name}`).toEqual(
        contentOf(obj as KubeObject),
      );
    expect(after[1]?.metadata.uid).not.toBe(before[1]?.metadata.uid); // re-created
    expect(await clients.admin.find(ref(ns.name, 'ConfigMap', 'web-env-bbbb2'))).toBeUndefined();
    const stayed = await untilSource(clients.admin, ns.name, 'web', attempted(failing, 'RolledBack'));
    expect(stayed.status?.lastApplied?.revision).toBe(first);
    expect(stayed.status?.inventory).toEqual(inventory);
    expect(stayed.status?.lastAttempted?.reason).toMatch(/./);
    expect(stayed.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    await recordedPhase(repo, ns.name, name, 'RolledBack');

    // A commit that does not change the render: the failed render is not tried again.
    await repo.push({ 'README.md': 'unrelated\n' });
    await morePolls(run, 3);
    expect((await sourceTransactions(clients.admin, ns.name, 'web')).length).toBe(2);

    // The next good commit applies.
    const fixed = await repo.push(
      release({
        image: POD_IMAGES.readyAlternative,
        env: { suffix: 'bbbb2', color: 'green' },
        legacy: false,
        mode: 'green',
      }),
    );
    await waitForPhase(clients.admin, ns.name, `web-${fixed.slice(0, 7)}`, 'Committed', 300_000);
    await availableWith(clients.admin, ns.name, 'web', POD_IMAGES.readyAlternative);
    const done = await untilSource(clients.admin, ns.name, 'web', attempted(fixed, 'Committed'));
    expect(done.status?.lastApplied?.revision).toBe(fixed);
    expect(await clients.admin.find(ref(ns.name, 'ConfigMap', 'web-env-aaaa1'))).toBeUndefined();
  });

  it('waits while its transaction runs; of commits pushed at once, the newest is applied and the others are superseded', {
    timeout: 900_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags(),
      logLevel: 'info',
    });
    const settings = (mode: string) => ({
      'deploy/app/settings.yaml': yamlDocuments({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings' },
        data: { mode },
      }),
    });
    // A bake window long enough to push while the transaction is in flight; the newest commit
    // shortens it (a declaration changes with the commit like the rest), so only the first waits.
    const spec = { path: 'deploy/app', plain: {}, health: { targets: 'All', stableFor: '40s' } };
    const shortWindow = { ...spec, health: { targets: 'All', stableFor: '1s' } };
    const first = await repo.push({ ...declaration('app', ns.name, spec), ...settings('one') });
    const running = `app-${first.slice(0, 7)}`;
    await waitForPhase(clients.admin, ns.name, running, 'Verifying', 120_000);
    const [second, third, outside, fourth] = await pushTogether(repo.bare, [
      settings('two'),
      settings('three'),
      { 'README.md': 'unrelated\n' },
      { ...declaration('app', ns.name, shortWindow), ...settings('four') },
    ]);
    // In flight, the source waits: no second transaction.
    expect((await sourceTransactions(clients.admin, ns.name, 'app')).map((t) => t.metadata.name)).toEqual([
      running,
    ]);
    await waitForPhase(clients.admin, ns.name, running, 'Committed', 120_000);
    const newest = `app-${(fourth ?? '').slice(0, 7)}`;
    await waitForPhase(clients.admin, ns.name, newest, 'Committed', 120_000);
    await untilSource(clients.admin, ns.name, 'app', attempted(fourth ?? '', 'Committed'));
    expect((await sourceTransactions(clients.admin, ns.name, 'app')).map((t) => t.metadata.name)).toEqual([
      running,
      newest,
    ]);
    for (const skipped of [second, third]) {
      const record = await recordedPhase(repo, ns.name, `app-${(skipped ?? '').slice(0, 7)}`, 'Superseded');
      expect(record).toMatchObject({ supersededBy: fourth, render: { source: 'app' } });
    }
    // A commit that did not touch the source is not said to be superseded by it.
    expect(await repo.result(ns.name, `app-${(outside ?? '').slice(0, 7)}`)).toBeUndefined();
    expect(await repo.subjects()).toEqual(
      expect.arrayContaining([
        `${ns.name}/app-${(second ?? '').slice(0, 7)}: Superseded by ${(fourth ?? '').slice(0, 7)}`,
      ]),
    );
  });
});
