/**
 * Drift of a source (docs/sources.md, "Drift"), through `janus run` and a real Git server: an
 * applied object edited by another user (a `kubectl edit`: an Update by another field manager) in
 * a field the source set is drift, shown in the Source's status, its Drifted condition and the
 * metric; a field only another manager set is not; a deleted object is drift; with
 * `drift.correct: true` a Transaction `<source>-drift-<n>` puts the objects back, and one that
 * fails is tried again only after a backoff, shown by `janus status`.
 *
 * The CRD's least interval is 1m: these tests set the test-only JANUS_TEST_DRIFT_INTERVAL_MS (2 s)
 * instead, so a check follows each change in seconds.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Source, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { everythingJanusWrote, expectNowhere, secretData } from '../../support/cluster/plaintext.ts';
import {
  configMap,
  data,
  serviceAccount,
  untilAuthorized,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus as janusCli } from '../../support/processes/cli.ts';
import type { JanusRunProcess } from '../../support/processes/janus-run.ts';
import { newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';
import { createTestRepo, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  ageKeySecret,
  attempted,
  declaration,
  SOURCE_DEPLOYER,
  sourceFlags,
  sourceTransactions,
  untilSource,
  yamlDocuments,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-drift');
const git = useGitServer();
const janus = useJanus(clients);

const DRIFT_ENV = { JANUS_TEST_DRIFT_INTERVAL_MS: '2000' };

const cm = (name: string, values: Record<string, string>) => ({
  ...configMap(ns.name, name, values),
  metadata: { name, labels: { app: 'shop' } },
});

/** A change by another user, as `kubectl edit` makes it: an Update (merge patch) under its own field manager. */
function edit(admin: Objects, name: string, patch: Record<string, unknown>, manager = 'kubectl-edit') {
  return admin.patch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns.name, name },
    patch,
    PatchType.merge,
    {
      fieldManager: manager,
    },
  );
}

/** Waits for a drift check that began after now: two checks ended from now on (the second began after the first ended). */
async function checkAfterNow(admin: Objects, name: string): Promise<Source> {
  const first = await nextCheck(admin, name, new Date().toISOString());
  return nextCheck(admin, name, first.status?.drift?.checkedAt ?? '');
}

function nextCheck(admin: Objects, name: string, after: string): Promise<Source> {
  return untilSource(admin, ns.name, name, (s) => {
    const at = s.status?.drift?.checkedAt ?? '';
    if (!(at > after)) throw new Error(`last drift check ${at || 'never'}, want one after ${after}`);
  });
}

async function driftMetric(run: JanusRunProcess, source: string): Promise<number | undefined> {
  const text = await (await fetch(`${await run.opsUrl()}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`janus_source_drifted_objects{namespace="${ns.name}",source="${source}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

const drifted = (s: Source) => s.status?.conditions?.find((c) => c.type === 'Drifted');

/** A correction Committed, and no drift left. */
function correctedInSync(s: Source): void {
  if (s.status?.drift?.correction?.outcome !== 'Committed' || s.status?.drift?.count !== 0)
    throw new Error(`drift ${JSON.stringify(s.status?.drift)}`);
}

describe('drift of a source', () => {
  it('shows an edited or deleted object as drift, and not a field only another manager set', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags(),
      env: DRIFT_ENV,
    });
    const commit = await repo.push({
      ...declaration('shop', ns.name, { path: 'deploy', plain: {}, drift: { interval: '1m' } }),
      'deploy/config.yaml': yamlDocuments(cm('settings', { mode: 'blue' }), cm('other', { size: 'small' })),
    });
    await waitForPhase(clients.admin, ns.name, `shop-${commit.slice(0, 7)}`, 'Committed', 180_000);
    await untilSource(clients.admin, ns.name, 'shop', attempted(commit, 'Committed'));

    // In sync once applied.
    const synced = await checkAfterNow(clients.admin, 'shop');
    expect(synced.status?.drift).toMatchObject({ count: 0 });
    expect(drifted(synced)).toMatchObject({ status: 'False', reason: 'InSync' });
    await eventually(async () => expect(await driftMetric(run, 'shop')).toBe(0));

    // Another manager adds a key and a label the source never set: no drift.
    await edit(
      clients.admin,
      'other',
      { data: { extra: 'theirs' }, metadata: { labels: { team: 'ops' } } },
      'ops-tool',
    );
    const untouched = await checkAfterNow(clients.admin, 'shop');
    expect(untouched.status?.drift).toMatchObject({ count: 0 });

    // kubectl edit of a value the source set: drift, named.
    await edit(clients.admin, 'settings', { data: { mode: 'red' } });
    const edited = await checkAfterNow(clients.admin, 'shop');
    expect(edited.status?.drift).toMatchObject({ count: 1, objects: [`v1 ConfigMap ${ns.name}/settings`] });
    expect(drifted(edited)).toMatchObject({ status: 'True', reason: 'Drifted' });
    expect(drifted(edited)?.message).toContain(`v1 ConfigMap ${ns.name}/settings (conflict:`);
    await eventually(async () => expect(await driftMetric(run, 'shop')).toBe(1));
    // Only reported: the edit stays.
    expect(await data(clients.admin, ns.name, 'settings')).toEqual({ mode: 'red' });

    // A deleted object: drift too.
    await clients.admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns.name, name: 'other' });
    const deleted = await checkAfterNow(clients.admin, 'shop');
    expect(deleted.status?.drift?.count).toBe(2);
    expect(drifted(deleted)?.message).toContain(`v1 ConfigMap ${ns.name}/other (missing: not found)`);
    await eventually(async () => expect(await driftMetric(run, 'shop')).toBe(2));
    expect(await sourceTransactions(clients.admin, ns.name, 'shop')).toHaveLength(1);
  });

  it('with correct: true, puts edited and deleted objects back by a transaction of its own', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags(),
      env: DRIFT_ENV,
    });
    const commit = await repo.push({
      ...declaration('fixed', ns.name, {
        path: 'deploy',
        plain: {},
        drift: { interval: '1m', correct: true },
      }),
      'deploy/config.yaml': yamlDocuments(cm('settings', { mode: 'blue' }), cm('other', { size: 'small' })),
    });
    await untilSource(clients.admin, ns.name, 'fixed', attempted(commit, 'Committed'));
    await checkAfterNow(clients.admin, 'fixed');

    await edit(clients.admin, 'settings', { data: { mode: 'red', added: 'by hand' } });
    await clients.admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns.name, name: 'other' });

    // One correction, or two if a check fell between the edit and the delete: each its own
    // Transaction <source>-drift-<n>, Committed, recorded; together they apply both objects.
    const corrected = await untilSource(clients.admin, ns.name, 'fixed', correctedInSync);
    expect(drifted(corrected)).toMatchObject({ status: 'False', reason: 'InSync' });
    const corrections = (await sourceTransactions(clients.admin, ns.name, 'fixed')).filter((t) =>
      t.metadata.name.startsWith('fixed-drift-'),
    );
    expect(corrections.length).toBeGreaterThanOrEqual(1);
    expect(corrections.length).toBeLessThanOrEqual(2);
    const applied = new Set<string>();
    for (const txn of corrections) {
      expect(txn.metadata.name).toMatch(/^fixed-drift-\d+$/);
      expect(txn.spec.sourceRef).toEqual({ name: 'fixed' });
      expect(txn.status?.phase).toBe('Committed');
      for (const c of txn.spec.changes) applied.add(`${c.type} ${c.target.name}`);
      await recordedPhase(repo, ns.name, txn.metadata.name, 'Committed');
    }
    expect([...applied].sort()).toEqual(['Apply other', 'Apply settings']);
    // The source's value is back; the key only the other user added stays (the source never set it).
    expect(await data(clients.admin, ns.name, 'settings')).toEqual({ mode: 'blue', added: 'by hand' });
    expect(await data(clients.admin, ns.name, 'other')).toEqual({ size: 'small' });

    await eventually(async () => expect(await driftMetric(run, 'fixed')).toBe(0));
    // A commit of the source still applies after its corrections.
    const next = await repo.push({
      'deploy/config.yaml': yamlDocuments(cm('settings', { mode: 'green' }), cm('other', { size: 'small' })),
    });
    await untilSource(clients.admin, ns.name, 'fixed', attempted(next, 'Committed'));
    expect(await data(clients.admin, ns.name, 'settings')).toEqual({ mode: 'green', added: 'by hand' });

    // A correction that fails is tried again after a backoff, not at once: the ServiceAccount may
    // no longer write ConfigMaps, so each correction of a deleted one fails at its dry run.
    const before = new Set(corrections.map((t) => t.metadata.name));
    await setDeployerRules(clients.admin, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    ]);
    await clients.admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns.name, name: 'other' });
    const failing = await untilSource(clients.admin, ns.name, 'fixed', (s) => {
      const c = s.status?.drift?.correction;
      if (!c?.failures) throw new Error(`correction ${JSON.stringify(c)}`);
    });
    expect(failing.status?.drift?.count).toBe(1);
    // janus status shows it: the failures in a row, and when the next may run.
    await eventually(async () => {
      const shown = await janusCli(['status', '-n', ns.name], { kubeconfig: clients.kubeconfigs.admin });
      expect(shown.code).toBe(0);
      expect(shown.stderr).toMatch(
        /Sources \(drift\):\n.*NEXT CORRECTION\n\S+\s+fixed\s+[0-9a-f]{7}\s+1\s+\S+ ago\s+fixed-drift-\d+ (Failed|RolledBack) \S+ ago, \d+ failed in a row\s+(in \S+ \(|at the next check)/,
      );
    });
    await setDeployerRules(clients.admin, SOURCE_DEPLOYER);
    const healed = await untilSource(clients.admin, ns.name, 'fixed', (s) => {
      const c = s.status?.drift?.correction;
      if (c?.outcome !== 'Committed' || s.status?.drift?.count !== 0)
        throw new Error(`drift ${JSON.stringify(s.status?.drift)}`);
    });
    // A correction that commits forgets the backoff.
    expect(healed.status?.drift?.correction).not.toHaveProperty('failures');
    expect(healed.status?.drift?.correction).not.toHaveProperty('retryAfter');
    expect(await data(clients.admin, ns.name, 'other')).toEqual({ size: 'small' });
    const retries = (await sourceTransactions(clients.admin, ns.name, 'fixed'))
      .filter((t) => t.metadata.name.startsWith('fixed-drift-') && !before.has(t.metadata.name))
      .sort((a, b) => sequenceOf(a) - sequenceOf(b));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries.at(-1)?.status?.phase).toBe('Committed');
    // Each one created no sooner than the backoff after the failed one before it: the test
    // interval (2 s) doubled per failure. Creation times are whole seconds.
    for (const [i, failed] of retries.slice(0, -1).entries()) {
      expect(['Failed', 'RolledBack']).toContain(failed.status?.phase);
      const retryAfter = Date.parse(failed.status?.completedAt ?? '') + 2000 * 2 ** i;
      const created = Date.parse(retries[i + 1]?.metadata.creationTimestamp ?? '');
      expect(
        created,
        `${retries[i + 1]?.metadata.name} after ${failed.metadata.name}`,
      ).toBeGreaterThanOrEqual(Math.floor(retryAfter / 1000) * 1000);
    }
  });
});

describe('drift of a source whose Secret is applied encrypted', () => {
  it('compares the Secret from its Transaction, decrypted, with no render, and puts it back encrypted', {
    timeout: 600_000,
  }, async () => {
    sopsBinaries();
    const team = await newAgeKey();
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    await ageKeySecret(clients.admin, ns.name, team);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags(),
      env: DRIFT_ENV,
      logLevel: 'debug',
    });
    // `data`, as a generator writes it (drift compares the fields the source's manager owns: a
    // Secret applied as stringData owns no data.* field).
    const secret = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: vault\ndata:\n  password: ${Buffer.from(password).toString('base64')}\n`;
    const commit = await repo.push({
      ...declaration('sealed', ns.name, {
        path: 'deploy',
        plain: {},
        drift: { interval: '1m', correct: true },
      }),
      'deploy/config.yaml': yamlDocuments(cm('plain', { mode: 'blue' })),
      'deploy/secret.yaml': sopsEncrypt(secret, {
        recipients: [team.recipient],
        flags: ['--encrypted-regex', '^(data)$'],
      }),
    });
    const applied = await waitForPhase(
      clients.admin,
      ns.name,
      `sealed-${commit.slice(0, 7)}`,
      'Committed',
      180_000,
    );
    expect(applied.spec.changes.find((c) => c.target.kind === 'Secret')?.sopsContent).toBeDefined();
    await untilSource(clients.admin, ns.name, 'sealed', attempted(commit, 'Committed'));

    // Both objects compared, none "not compared": the Secret's applied content was found in its
    // Transaction, decrypted; nothing was rendered again (a render is only for what is not found).
    const synced = await checkAfterNow(clients.admin, 'sealed');
    expect(synced.status?.drift).toMatchObject({ count: 0 });
    expect(drifted(synced)?.message).toBe(
      `the 2 live object(s) match the render of ${commit.slice(0, 7)}, as last applied`,
    );

    // Another user changes the password: drift, put back by a correction that carries it encrypted.
    await clients.admin.patch(
      { apiVersion: 'v1', kind: 'Secret', namespace: ns.name, name: 'vault' },
      { data: { password: Buffer.from('changed-by-hand').toString('base64') } },
      PatchType.merge,
      { fieldManager: 'kubectl-edit' },
    );
    const corrected = await untilSource(clients.admin, ns.name, 'sealed', correctedInSync);
    expect(drifted(corrected)).toMatchObject({ status: 'False', reason: 'InSync' });
    expect(await secretData(clients.admin, ns.name, 'vault')).toEqual({ password });
    const corrections = (await sourceTransactions(clients.admin, ns.name, 'sealed')).filter((t) =>
      t.metadata.name.startsWith('sealed-drift-'),
    );
    expect(corrections.length).toBeGreaterThanOrEqual(1);
    for (const txn of corrections)
      for (const change of txn.spec.changes) {
        expect(change.target.kind).toBe('Secret');
        expect(change.content).toBeUndefined();
        expect(change.sopsContent).toBeDefined();
      }
    expectNowhere(await everythingJanusWrote(clients.admin, ns.name, repo.bare, await run.logs()), [
      password,
    ]);
  });
});

/** The Git-order sequence of a correction `<source>-drift-<sequence>`. */
const sequenceOf = (txn: Transaction) => Number(/-drift-(\d+)$/.exec(txn.metadata.name)?.[1]);

/** Gives the ServiceAccount deployer exactly `rules`, once the API server's authorizer applies them. */
async function setDeployerRules(admin: Objects, rules: typeof SOURCE_DEPLOYER): Promise<void> {
  await admin.patch(
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespace: ns.name, name: 'deployer' },
    { rules },
    PatchType.merge,
  );
  const mayPatch = rules.some((r) => r.resources.includes('configmaps') && r.verbs.some((v) => v === '*'));
  const patchConfigMaps = { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] };
  await untilAuthorized(
    admin,
    ns.name,
    `system:serviceaccount:${ns.name}:deployer`,
    patchConfigMaps,
    mayPatch,
  );
}
