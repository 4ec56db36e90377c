/**
 * The API side of `janus plan`: reads each target and dry-runs each change the way the
 * controller's prepare step will (same verbs, same field manager, same preconditions), as the
 * transaction's ServiceAccount or as the person running the plan.
 */
import type { Change, Transaction } from '../api/v1alpha1/index.ts';
import { isNotFound, KubeApiError } from '../kube/errors.ts';
import type { KubeObject, ObjectRef, Objects } from '../kube/resources.ts';
import { describeError } from '../log/describe-error.ts';
import {
  describeTarget,
  fieldManager,
  resolveTarget,
  serviceAccountUser,
  statusTarget,
} from '../saga/targets.ts';
import { failedChange, type PlannedChange, planChange, type TransactionPlan } from './plan-view.ts';

export interface PlanOptions {
  /** The person's own client; impersonates the ServiceAccount when asServiceAccount. */
  objects: Objects;
  asServiceAccount: boolean;
  /** The person's user name, for the report. */
  self: string | undefined;
}

export async function planTransaction(
  txn: Transaction,
  path: string,
  opts: PlanOptions,
): Promise<TransactionPlan> {
  const namespace = txn.metadata.namespace ?? 'default';
  const plan: TransactionPlan = { path, namespace, name: txn.metadata.name, changes: [], problems: [] };
  let objects = opts.objects;
  if (opts.asServiceAccount) {
    const user = serviceAccountUser(txn);
    plan.identity = user;
    const missing = await missingServiceAccount(opts.objects, namespace, txn.spec.serviceAccountName);
    if (missing) {
      plan.problems.push(missing);
      return plan;
    }
    objects = opts.objects.as(user);
  } else if (opts.self) {
    plan.identity = opts.self;
  }
  for (const [index, change] of txn.spec.changes.entries()) {
    plan.changes.push(await planOne(objects, txn, index, change, opts.asServiceAccount));
  }
  return plan;
}

async function planOne(
  objects: Objects,
  txn: Transaction,
  index: number,
  change: Change,
  asServiceAccount: boolean,
): Promise<PlannedChange> {
  const namespace = txn.metadata.namespace ?? 'default';
  let label = `${change.target.apiVersion} ${describeTarget({ ...change.target, namespace: change.target.namespace ?? namespace })}`;
  try {
    const mapping = await objects.discovery.mapping(change.target.apiVersion, change.target.kind);
    const resolved = resolveTarget(change.target, namespace, mapping.namespaced);
    label = statusTarget(resolved);
    const ref: ObjectRef = { ...change.target, namespace: resolved.namespace };
    const current = await objects.find(ref);
    const planned = await dryRun(objects, txn, change, ref, current);
    return planChange(index, change.type, label, current, planned);
  } catch (e) {
    return failedChange(index, change.type, label, explain(e, asServiceAccount));
  }
}

/** The object the controller would send: the content, with the target's identity. */
function desired(change: Change, ref: ObjectRef, resourceVersion?: string): KubeObject {
  const { status: _status, ...content } = (change.content ?? {}) as Record<string, unknown>;
  const meta = (content.metadata ?? {}) as KubeObject['metadata'];
  return {
    ...content,
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: {
      ...meta,
      name: ref.name,
      ...(ref.namespace && { namespace: ref.namespace }),
      ...(resourceVersion && { resourceVersion }),
    },
  };
}

/** The object as it would be after the change; undefined when the change deletes it. */
async function dryRun(
  objects: Objects,
  txn: Transaction,
  change: Change,
  ref: ObjectRef,
  current: KubeObject | undefined,
): Promise<KubeObject | undefined> {
  const manager = fieldManager(txn);
  const rv = current?.metadata.resourceVersion;
  switch (change.type) {
    case 'Create':
      if (current)
        throw new PlanRefusal(`${ref.kind} ${ref.name} already exists: a Create would fail at prepare`);
      return objects.create(desired(change, ref), { dryRun: true, fieldManager: manager });
    case 'Update':
      if (!current)
        throw new PlanRefusal(`${ref.kind} ${ref.name} does not exist: an Update needs an existing object`);
      return objects.replace(desired(change, ref, rv), { dryRun: true, fieldManager: manager });
    case 'Patch':
      return objects.apply(desired(change, ref, rv), { dryRun: true, fieldManager: manager, force: true });
    case 'Delete':
      if (current) await objects.delete(ref, { dryRun: true, preconditions: { resourceVersion: rv } });
      return undefined;
  }
}

class PlanRefusal extends Error {}

function explain(e: unknown, asServiceAccount: boolean): string {
  if (e instanceof PlanRefusal) return e.message;
  if (e instanceof KubeApiError) {
    const hint =
      e.status === 403 && asServiceAccount && /impersonate/.test(e.serverMessage)
        ? ' (you may not impersonate the ServiceAccount: plan as yourself with --no-as-service-account)'
        : '';
    return `${e.reason}: ${e.serverMessage}${hint}`;
  }
  return describeError(e).message;
}

/** A message when the ServiceAccount is known not to exist; undefined if it exists or we may not look. */
async function missingServiceAccount(
  objects: Objects,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  try {
    await objects.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name });
    return undefined;
  } catch (e) {
    if (isNotFound(e)) {
      return `ServiceAccount ${namespace}/${name} does not exist: the transaction would fail before any change`;
    }
    return undefined;
  }
}
