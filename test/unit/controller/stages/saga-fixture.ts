/**
 * What a SagaRun needs, over the in-memory API (test/support/fake-api.ts): the real Lease locks,
 * rollback store, ServiceAccount check and status writes, a health reader that reads the targets
 * by GET, a clock the test moves, and the Events recorded. The stages run on it as they run in
 * the controller, one call at a time, with no timing.
 */
import { afterEach } from 'vitest';
import {
  API_VERSION,
  type Change,
  KIND,
  type Transaction,
  type TransactionSpec,
} from '../../../../src/api/v1alpha1/index.ts';
import { noSagaMetrics, type SagaDeps, SagaRun } from '../../../../src/controller/context.ts';
import type { HealthReader } from '../../../../src/controller/health-watch.ts';
import { HeldLocks } from '../../../../src/controller/held-locks.ts';
import { measurementRunner } from '../../../../src/controller/measurements.ts';
import { ServiceAccounts } from '../../../../src/controller/service-accounts.ts';
import type { StageOutcome, StageResult } from '../../../../src/controller/stages/outcomes.ts';
import { verify } from '../../../../src/controller/stages/verify.ts';
import { ViewRole } from '../../../../src/controller/view-role.ts';
import { CORE_MAPPINGS, Discovery, type KubeObject, Objects } from '../../../../src/kube/resources.ts';
import { LeaseLocks } from '../../../../src/locks/lease-locks.ts';
import { microTime } from '../../../../src/locks/lease-name.ts';
import { LockTables } from '../../../../src/locks/lock-table.ts';
import { silentLogger } from '../../../../src/log/index.ts';
import { RollbackStore } from '../../../../src/rollback-store/store.ts';
import { FakeApi } from '../../../support/fake-api.ts';
import { aTransaction } from '../../../support/transactions.ts';

export const NAMESPACE = 'shop';
export const START = Date.parse('2026-03-01T12:00:00.000Z');

export interface RecordedEvent {
  type: string;
  reason: string;
  message: string;
}

export interface SagaWorld {
  api: FakeApi;
  /** The controller's clock: what `deps.now()` returns. */
  clock: { now: number };
  deps: SagaDeps;
  events: RecordedEvent[];
  /** Waiters the health reader was told to forget. */
  released: string[];
}

const worlds: SagaWorld[] = [];
afterEach(() => {
  for (const w of worlds.splice(0)) w.deps.heldLocks.stop();
});

/** A new world: a namespace with the ServiceAccount deploy-sa, nothing else. */
export function sagaWorld(): SagaWorld {
  const api = new FakeApi();
  const clock = { now: START };
  const now = () => clock.now;
  const client = api.client();
  const discovery = new Discovery(client);
  for (const m of CORE_MAPPINGS) discovery.seed(m);
  discovery.seed({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    resource: 'deployments',
    namespaced: true,
  });
  const locks = new LeaseLocks(client, { now });
  const events: RecordedEvent[] = [];
  const released: string[] = [];
  const health: HealthReader = {
    observe: (_waiter, targets, asServiceAccount) =>
      Promise.all(
        targets.map(async (t) => ({ object: await asServiceAccount.find(t), related: {}, polled: true })),
      ),
    release: (waiter) => released.push(waiter),
  };
  const objects = new Objects(client, discovery);
  const deps: SagaDeps = {
    client,
    objects,
    locks,
    lockTables: new LockTables(client),
    store: new RollbackStore(client),
    events: {
      record: async (_txn, type, reason, message) => {
        events.push({ type, reason, message });
      },
    },
    metrics: noSagaMetrics,
    log: silentLogger(),
    now,
    controllerNamespace: 'janus-system',
    isLiveInstallation: () => false,
    analysis: { allowedAddresses: [], templateNamespaces: ['janus-system'] },
    sopsKinds: [],
    viewRole: new ViewRole(client, now),
    serviceAccounts: new ServiceAccounts(client, now),
    heldLocks: new HeldLocks({ locks, now, log: silentLogger() }),
    health,
    measurements: measurementRunner({}),
    wake: () => {},
    queuedAhead: async () => undefined,
    onWrite: () => {},
  };
  api.put({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'deploy-sa', namespace: NAMESPACE },
  });
  const world = { api, clock, deps, events, released };
  worlds.push(world);
  return world;
}

/** Creates a Transaction (with the finalizer, no status yet) and returns its name. */
export function transaction(
  world: SagaWorld,
  name: string,
  changes: Change[],
  spec: Partial<TransactionSpec> = {},
): string {
  const { serviceAccountName = 'deploy-sa', changes: _changes, ...rest } = spec;
  world.api.put<Transaction>(
    aTransaction({
      name,
      namespace: NAMESPACE,
      finalizers: ['tx.janus.io/finalizer'],
      serviceAccountName,
      changes,
      spec: rest,
    }),
  );
  return name;
}

export function stored(world: SagaWorld, name: string): Transaction {
  const txn = world.api.get<Transaction>({ apiVersion: API_VERSION, kind: KIND, name, namespace: NAMESPACE });
  if (!txn) throw new Error(`no Transaction ${name}`);
  return txn;
}

/**
 * Runs one stage on the Transaction as stored, as the reconciler does: a health check the stage
 * enters is looked at at once.
 */
export async function step(
  world: SagaWorld,
  name: string,
  stage: (run: SagaRun) => Promise<StageOutcome>,
): Promise<StageResult> {
  const run = await SagaRun.start(world.deps, stored(world, name));
  const outcome = await stage(run);
  return 'enterCheck' in outcome ? verify(run, outcome.enterCheck) : outcome;
}

/**
 * The lock of change `index` is lost: a restart forgot the locks this process held, and
 * meanwhile another transaction (shop/other) took that Lease, held from now on.
 */
export function loseLock(world: SagaWorld, name: string, index: number): void {
  const txn = stored(world, name);
  world.deps.heldLocks.forget(txn.metadata.uid ?? '');
  const [namespace, lease] = (txn.status?.items?.[index]?.lease ?? '').split('/');
  const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: lease ?? '', namespace };
  const current = world.api.get(ref);
  if (!current) throw new Error(`no Lease for change ${index}`);
  world.api.put({
    ...current,
    spec: {
      holderIdentity: 'shop/other/uid-other',
      leaseDurationSeconds: 300,
      renewTime: microTime(world.clock.now),
    },
  } as KubeObject);
}

/** A ConfigMap in the namespace. */
export const configMap = (
  name: string,
  data: Record<string, string>,
): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NAMESPACE },
  data,
});

export const updateConfigMap = (name: string, data: Record<string, string>): Change => ({
  type: 'Update',
  target: { apiVersion: 'v1', kind: 'ConfigMap', name },
  content: { data },
});

type Deployment = KubeObject & { spec: Record<string, unknown> };

export const deployment = (name: string, image: string): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NAMESPACE },
  spec: { replicas: 1, template: { spec: { containers: [{ name: 'app', image }] } } },
});

export const updateDeployment = (name: string, image: string): Change => ({
  type: 'Update',
  target: { apiVersion: 'apps/v1', kind: 'Deployment', name },
  content: { spec: deployment(name, image).spec },
});

/** Deployment statuses as its controller reports them. */
export const rollout = {
  complete: {
    replicas: 1,
    updatedReplicas: 1,
    availableReplicas: 1,
    readyReplicas: 1,
    conditions: [
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
      { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
    ],
  },
  inProgress: {
    replicas: 1,
    updatedReplicas: 0,
    availableReplicas: 0,
    readyReplicas: 0,
    conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' }],
  },
  stuck: {
    replicas: 1,
    updatedReplicas: 0,
    conditions: [
      {
        type: 'Progressing',
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'ReplicaSet "web-2" has timed out progressing.',
      },
    ],
  },
};
