/** Fixtures for saga tests: a ServiceAccount with chosen rights, Transactions, and waiting on phases. */
import { randomBytes } from 'node:crypto';
import {
  type Change,
  LOCK_TABLE_API_VERSION,
  LOCK_TABLE_KIND,
  LOCK_TABLE_NAME,
  type LockEntry,
  type Phase,
  type Transaction,
} from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { leaseName, microTime } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { eventually } from '../eventually.ts';
import { aTransaction } from '../transactions.ts';
import { type InstanceChoice, labelled, namespaceInstance } from './instance.ts';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export const ALL_ON_CONFIGMAPS: Rule = { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] };

/**
 * A namespace of its own for one test (`<prefix>-<random>`, so tests run side by side); with
 * `deployer`, a ServiceAccount "deployer" with exactly those rights, for the transactions.
 */
export async function testNamespace(
  admin: Objects,
  prefix: string,
  opts: { deployer?: Rule[]; labels?: Record<string, string> } = {},
): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await admin.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, ...(opts.labels && { labels: opts.labels }) },
  });
  await grantJanus(admin, name);
  if (opts.deployer) await serviceAccount(admin, name, 'deployer', opts.deployer);
  return name;
}

/**
 * Opts a namespace in to Janus, as docs/security.md tells an installer to: a RoleBinding of the
 * ClusterRole janus-tenant to the controller's ServiceAccount.
 */
export async function grantJanus(admin: Objects, namespace: string): Promise<void> {
  await admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'janus-tenant', namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'janus-tenant' },
    subjects: [{ kind: 'ServiceAccount', name: 'janus-controller', namespace: 'janus-system' }],
  });
  await untilAuthorized(admin, namespace, 'system:serviceaccount:janus-system:janus-controller', {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['create'],
  });
}

/**
 * Waits until the API server's authorizer applies a grant just made: its RBAC informers see a
 * new RoleBinding some milliseconds later, and a request made meanwhile is refused (a test that
 * used it at once failed now and then with 403 on a loaded machine). A SubjectAccessReview asks
 * that same authorizer. With `allowed: false`, waits until a grant just taken away is refused.
 */
export async function untilAuthorized(
  admin: Objects,
  namespace: string,
  user: string,
  rule: Rule,
  allowed = true,
): Promise<void> {
  const [resource = 'pods', subresource] = (
    rule.resources[0] === '*' ? 'pods' : (rule.resources[0] ?? '')
  ).split('/');
  const verb = rule.verbs[0] === '*' || rule.verbs[0] === undefined ? 'get' : rule.verbs[0];
  const group = rule.apiGroups[0] === '*' ? '' : (rule.apiGroups[0] ?? '');
  const attributes = {
    namespace,
    verb,
    group,
    resource,
    ...(subresource && { subresource }),
    ...(rule.resourceNames?.[0] && { name: rule.resourceNames[0] }),
  };
  await eventually(async () => {
    const review = await admin.client.request<{ status?: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, resourceAttributes: attributes },
      },
    });
    if ((review.status?.allowed === true) !== allowed)
      throw new Error(`${user} may ${allowed ? 'not yet' : 'still'} ${verb} ${resource} in ${namespace}`);
  });
}

/** A ServiceAccount bound to a Role with exactly these rules. */
export async function serviceAccount(
  admin: Objects,
  namespace: string,
  name: string,
  rules: Rule[],
): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  await grantRole(admin, namespace, name, rules, { kind: 'ServiceAccount', name, namespace });
}

/** Lets a ServiceAccount of another namespace do exactly this in `namespace`. */
export function grantElsewhere(
  admin: Objects,
  namespace: string,
  account: { namespace: string; name: string },
  rules: Rule[],
): Promise<void> {
  return grantRole(admin, namespace, `${account.namespace}-${account.name}`, rules, {
    kind: 'ServiceAccount',
    ...account,
  });
}

export type Subject =
  | { kind: 'ServiceAccount'; name: string; namespace: string }
  | { kind: 'User'; name: string; apiGroup: 'rbac.authorization.k8s.io' };

/**
 * A ClusterRole `name` with exactly these rules, bound cluster-wide to `subject` (a source's
 * cluster-scoped objects); returns how to remove both.
 */
export async function grantClusterRole(
  admin: Objects,
  name: string,
  rules: Rule[],
  subject: Subject,
): Promise<() => Promise<void>> {
  const rbac = 'rbac.authorization.k8s.io/v1';
  await admin.create({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules });
  await admin.create({
    apiVersion: rbac,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [subject],
  });
  const user = userOf(subject);
  const first = rules[0];
  if (first) await untilAuthorized(admin, '', user, first);
  return async () => {
    for (const kind of ['ClusterRoleBinding', 'ClusterRole'])
      await admin.delete({ apiVersion: rbac, kind, name }).catch(() => undefined);
  };
}

/** The user name the API server knows a subject by. */
function userOf(subject: Subject): string {
  return subject.kind === 'ServiceAccount'
    ? `system:serviceaccount:${subject.namespace}:${subject.name}`
    : subject.name;
}

/** A Role `name` in `namespace` with exactly these rules, bound to `subject`. */
export async function grantRole(
  admin: Objects,
  namespace: string,
  name: string,
  rules: Rule[],
  subject: Subject,
): Promise<void> {
  await admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules,
  });
  await admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [subject],
  });
  const user = userOf(subject);
  const first = rules[0];
  if (first) await untilAuthorized(admin, namespace, user, first);
}

export function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

export const cmTarget = (name: string, namespace?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name,
  ...(namespace && { namespace }),
});

/**
 * A Transaction for the installation a test scoped to `namespace` starts (instance.ts): labelled
 * with the namespace's instance, unless `instance` names another (null: the default installation).
 */
export function transaction(
  namespace: string,
  name: string,
  changes: Change[],
  opts: {
    serviceAccountName?: string;
    timeout?: string;
    lockTimeout?: string;
    annotations?: Record<string, string>;
    health?: Transaction['spec']['health'];
    instance?: InstanceChoice;
  } = {},
): Transaction {
  const txn = aTransaction({
    name,
    namespace,
    ...(opts.annotations && { annotations: opts.annotations }),
    ...(opts.serviceAccountName && { serviceAccountName: opts.serviceAccountName }),
    spec: {
      ...(opts.timeout && { timeout: opts.timeout }),
      ...(opts.lockTimeout && { lockTimeout: opts.lockTimeout }),
      ...(opts.health && { health: opts.health }),
    },
    changes,
  });
  return labelled(txn, opts.instance === null ? undefined : (opts.instance ?? namespaceInstance(namespace)));
}

export const txnRef = (namespace: string, name: string) => ({
  apiVersion: 'tx.janus.io/v1alpha1',
  kind: 'Transaction',
  name,
  namespace,
});

export async function getTxn(admin: Objects, namespace: string, name: string): Promise<Transaction> {
  return (await admin.get(txnRef(namespace, name))) as unknown as Transaction;
}

/** Waits until the Transaction reaches `phase` (failing fast if it settles in another terminal phase). */
export async function waitForPhase(
  admin: Objects,
  namespace: string,
  name: string,
  phase: Phase,
  timeoutMs = 90_000,
): Promise<Transaction> {
  return eventually(
    async () => {
      const txn = await getTxn(admin, namespace, name);
      const current = txn.status?.phase;
      if (current !== phase) {
        const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
        throw new Error(
          `phase is ${current ?? '(none)'}, want ${phase}; Ready: ${ready?.reason}: ${ready?.message}`,
        );
      }
      return txn;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

export async function annotate(
  admin: Objects,
  namespace: string,
  name: string,
  annotations: Record<string, string>,
) {
  await admin.patch(txnRef(namespace, name), { metadata: { annotations } }, PatchType.merge);
}

export async function data(
  admin: Objects,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  const cm = await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace });
  return cm ? ((cm.data as Record<string, string> | undefined) ?? {}) : undefined;
}

export async function leasesOf(admin: Objects, namespace: string): Promise<KubeObject[]> {
  return (
    await admin.list('coordination.k8s.io/v1', 'Lease', namespace, {
      labelSelector: 'app.kubernetes.io/managed-by=janus',
    })
  ).items;
}

/** Three existing ConfigMaps for fourChanges(): updated, patched and deleted. */
export async function fourTargets(admin: Objects, namespace: string): Promise<void> {
  for (const cm of fourTargetObjects(namespace)) await admin.create(cm);
}

export function fourTargetObjects(namespace: string): KubeObject[] {
  return [
    configMap(namespace, 'updated', { old: 'value' }),
    configMap(namespace, 'patched', { kept: 'yes', changed: 'before' }),
    configMap(namespace, 'deleted', { precious: 'data' }),
  ];
}

/** One change of each type, in this order: Create, Update, Patch, Delete. */
export function fourChanges(): Change[] {
  return [
    { target: cmTarget('created'), type: 'Create', content: { data: { fresh: 'yes' } } },
    { target: cmTarget('updated'), type: 'Update', content: { data: { new: 'value' } } },
    { target: cmTarget('patched'), type: 'Patch', content: { data: { changed: 'after', added: 'new' } } },
    { target: cmTarget('deleted'), type: 'Delete' },
  ];
}

/** A Lease on `target` held by another (made-up) transaction for an hour: a contested lock. */
export async function lockHeldElsewhere(
  admin: Objects,
  namespace: string,
  configMapName: string,
): Promise<string> {
  const name = leaseName(
    resolveTarget({ apiVersion: 'v1', kind: 'ConfigMap', name: configMapName }, namespace, true),
  );
  await admin.create({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace },
    spec: {
      holderIdentity: `${namespace}/holder/uid-0`,
      leaseDurationSeconds: 3600,
      renewTime: microTime(Date.now()),
    },
  });
  return name;
}

/** What Janus told about the Transactions of `namespace` (their Events), as "reason: message". */
export async function transactionEvents(admin: Objects, namespace: string): Promise<string[]> {
  const events = await admin.list('v1', 'Event', namespace);
  type Event = { reason?: string; message?: string; involvedObject?: { kind?: string } };
  return (events.items as unknown as Event[])
    .filter((e) => e.involvedObject?.kind === 'Transaction')
    .map((e) => `${e.reason}: ${e.message}`);
}

/** The entries of the LockTable of `namespace` (none when it has no table). */
export async function lockEntries(admin: Objects, namespace: string): Promise<Record<string, LockEntry>> {
  const table = (await admin.find({
    apiVersion: LOCK_TABLE_API_VERSION,
    kind: LOCK_TABLE_KIND,
    name: LOCK_TABLE_NAME,
    namespace,
  })) as (KubeObject & { spec?: { locks?: Record<string, LockEntry> } }) | undefined;
  return table?.spec?.locks ?? {};
}
