/**
 * What history costs in etcd, and what the default retention policy keeps of it:
 *
 * 1. One real transaction (5 Patch changes on ConfigMaps of 1 KiB each) run to Committed: the
 *    bytes of its Transaction and of its rollback store, as the API server serves them (JSON,
 *    managedFields included). etcd stores the Transaction as this JSON, and the store's
 *    ConfigMaps as protobuf of about the same size.
 * 2. A history of 10,000 such Committed transactions, 50 finished a day over 200 days, each with a
 *    store of that size, owned by its Transaction as the controller leaves it; then a controller
 *    with the default policy (only the sweep interval shortened, to converge in minutes rather
 *    than 100 deletions a minute) prunes it. What is left, and its bytes, is the bounded total:
 *    the same for any history longer than the rollback window.
 * 3. The controller's resident memory and restart cost once pruned, against 10,000 unpruned
 *    (the memory benchmark): a restart lists what the policy retains, not what was ever applied.
 */
import { LABEL_TRANSACTION } from '../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../src/kube/resources.ts';
import { DEFAULT_RETENTION } from '../../src/retention/select.ts';
import { cmTarget, configMap, getTxn, transaction, txnRef } from '../support/cluster/saga.ts';
import { type Bench, timeUntil } from './harness.ts';
import { memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const HISTORY = 10_000;
const PER_DAY = 50;
const DAY_MS = 24 * 3_600_000;
const KiB = 1024;

const bytes = (object: unknown) => Buffer.byteLength(JSON.stringify(object));

/** Runs one 5-change transaction; returns the bytes of the Transaction and of its store, and the store's data. */
async function sample(b: Bench): Promise<{ txn: number; store: number; storeData: Record<string, string> }> {
  const ns = await b.namespace('footprint-sample');
  const changes = [];
  for (let i = 0; i < 5; i++) {
    await b.admin.create(configMap(ns, `app-${i}`, { 'config.json': 'x'.repeat(KiB) }));
    changes.push({
      target: cmTarget(`app-${i}`),
      type: 'Patch' as const,
      content: { data: { 'config.json': 'y'.repeat(KiB) } },
    });
  }
  const controller = await b.controller(ns);
  await b.admin.create(transaction(ns, 'sample', changes));
  await timeUntil(async () => (await getTxn(b.admin, ns, 'sample')).status?.phase === 'Committed');
  await controller.stop();
  const txn = await b.admin.get(txnRef(ns, 'sample'));
  const stores = (await b.admin.list('v1', 'ConfigMap', ns, { labelSelector: `${LABEL_TRANSACTION}=sample` }))
    .items;
  const secrets = (await b.admin.list('v1', 'Secret', ns, { labelSelector: `${LABEL_TRANSACTION}=sample` }))
    .items;
  return {
    txn: bytes(txn),
    store: [...stores, ...secrets].reduce((sum, o) => sum + bytes(o), 0),
    storeData: (stores[0]?.data ?? {}) as Record<string, string>,
  };
}

export async function footprint(b: Bench): Promise<Record<string, Figure>> {
  const one = await sample(b);
  const ns = await b.namespace('footprint');
  const now = Date.now();
  // Oldest first: transaction i finished (HISTORY - i) / PER_DAY days ago.
  for (let start = 0; start < HISTORY; start += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, HISTORY - start) }, async (_, k) => {
        const i = start + k;
        const name = `done-${i}`;
        const created = (await b.admin.create(
          transaction(
            ns,
            name,
            Array.from({ length: 5 }, (_, c) => ({
              target: cmTarget(`app-${i}-${c}`),
              type: 'Patch' as const,
              content: { data: { 'config.json': 'y'.repeat(KiB) } },
            })),
          ),
        )) as KubeObject;
        const completedAt = new Date(now - ((HISTORY - i) / PER_DAY) * DAY_MS).toISOString();
        await b.admin.patch(
          txnRef(ns, name),
          { status: { phase: 'Committed', progress: '5/5', completedAt } },
          'application/merge-patch+json',
          { subresource: 'status' },
        );
        await b.admin.create({
          ...configMap(ns, `${name}-rollback`, one.storeData),
          metadata: {
            name: `${name}-rollback`,
            namespace: ns,
            labels: { [LABEL_TRANSACTION]: name },
            ownerReferences: [
              {
                apiVersion: 'tx.janus.io/v1alpha1',
                kind: 'Transaction',
                name,
                uid: created.metadata.uid ?? '',
                controller: true,
              },
            ],
          },
        } as KubeObject);
      }),
    );
  }
  const count = async (kind: 'Transaction' | 'ConfigMap') =>
    kind === 'Transaction'
      ? (await b.admin.list('tx.janus.io/v1alpha1', 'Transaction', ns)).items.length
      : (await b.admin.list('v1', 'ConfigMap', ns, { labelSelector: LABEL_TRANSACTION })).items.length;
  // Committed ones inside the rollback window stay (the newest 10 are among them).
  const expected = Math.ceil((DEFAULT_RETENTION.rollbackWindowMs / DAY_MS) * PER_DAY);
  const controller = await b.controller(ns, ['--no-leader-elect', '--prune-interval', '1s']);
  const started = performance.now();
  await timeUntil(async () => (await count('Transaction')) <= expected, 900_000, 2_000);
  const pruneSeconds = (performance.now() - started) / 1000;
  await timeUntil(async () => (await count('ConfigMap')) <= expected, 900_000, 2_000); // the garbage collector
  await new Promise((r) => setTimeout(r, 5_000));
  const prunedRss = await memoryMiB(controller.child.pid ?? 0);
  await controller.stop();
  // A restart over the pruned history: its LIST and its memory.
  b.proxy.reset();
  const restarted = await b.controller(ns, ['--no-leader-elect', '--prune-interval', '1s']);
  const url = await restarted.opsUrl();
  const t0 = performance.now();
  await timeUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 300_000, 100);
  const readySeconds = (performance.now() - t0) / 1000;
  const restartRequests = b.proxy.requests.filter((r) => !r.watch).length;
  await new Promise((r) => setTimeout(r, 5_000));
  const restartRss = await memoryMiB(restarted.child.pid ?? 0);
  await restarted.stop();
  const retained = await count('Transaction');
  const perTransaction = one.txn + one.store;
  return {
    'bytes per finished transaction: Transaction (5 changes of 1 KiB)': figure([one.txn], 'B'),
    'bytes per finished transaction: its rollback store': figure([one.store], 'B'),
    [`Transactions left of ${HISTORY.toLocaleString('en')} (50 a day over 200 days), default policy`]: figure(
      [retained],
      '',
    ),
    [`bytes left of ${HISTORY.toLocaleString('en')}, default policy (unpruned: ${((HISTORY * perTransaction) / 2 ** 20).toFixed(0)} MiB)`]:
      figure([(retained * perTransaction) / 2 ** 20], 'MiB'),
    'time to prune that history (1 s sweeps of at most 100)': figure([pruneSeconds], 's'),
    'controller resident memory once pruned': figure([prunedRss], 'MiB'),
    'restart over the pruned history: time to ready': figure([readySeconds], 's'),
    'restart over the pruned history: API requests until ready (watches aside)': figure(
      [restartRequests],
      '',
    ),
    'restart over the pruned history: resident memory': figure([restartRss], 'MiB'),
  };
}
