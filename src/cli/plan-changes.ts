/**
 * The API side of `janus plan`: judges each change with the controller's own change operations
 * (src/changes): the same dry run (desired object with the applied-by stamp, verb, field manager,
 * preconditions) and the same verdicts on the target's existence, as the transaction's
 * ServiceAccount or as the person running the plan.
 */
import type { Change, Transaction } from '../api/v1alpha1/index.ts';
import { beforeCreation, type ChangeItem } from '../changes/change-context.ts';
import { type ChangeRefusal, dryRunVerdict, readPrior } from '../changes/prepare-verdicts.ts';
import { sopsKindRefusal } from '../changes/sops-kinds.ts';
import { isNotFound, KubeApiError } from '../kube/errors.ts';
import type { Objects } from '../kube/resources.ts';
import { describeError } from '../log/describe-error.ts';
import { describeTarget, resolveTarget, serviceAccountUser, statusTarget } from '../saga/targets.ts';
import {
  failedChange,
  type PlannedChange,
  planChange,
  type TransactionPlan,
  withCurrentStamp,
} from './plan-view.ts';

export interface PlanOptions {
  /** The person's own client; impersonates the ServiceAccount when asServiceAccount. */
  objects: Objects;
  asServiceAccount: boolean;
  /** The person's user name, for the report. */
  self: string | undefined;
  /**
   * The kinds besides Secret whose content is secret: the repository policy's --sops-kinds, the
   * controller's setting (JANUS_SOPS_KINDS, from --settings too). Their content is masked.
   */
  sopsKinds: readonly string[];
}

export async function planTransaction(
  txn: Transaction,
  path: string,
  opts: PlanOptions,
): Promise<TransactionPlan> {
  const namespace = txn.metadata.namespace ?? 'default';
  const plan: TransactionPlan = { path, namespace, name: txn.metadata.name, changes: [], problems: [] };
  const { objects, identity } = planIdentity(opts, namespace, txn.spec.serviceAccountName);
  if (identity) plan.identity = identity;
  if (opts.asServiceAccount) {
    const missing = await missingServiceAccount(opts.objects, namespace, txn.spec.serviceAccountName);
    if (missing) {
      plan.problems.push(missing);
      return plan;
    }
  }
  for (const [index, change] of txn.spec.changes.entries()) {
    plan.changes.push(await planOne(objects, txn, index, change, opts));
  }
  return plan;
}

/**
 * The identity a plan of `namespace`'s transaction run by `serviceAccount` acts as, and the client
 * acting as it: the ServiceAccount (impersonated), or with --no-as-service-account the person.
 * Every read and dry run of the plan goes through it, and so does every read of the age keys of
 * SOPS-encrypted content: a change's (changes/sops-content.ts), a source's render (plan-sources.ts).
 */
export function planIdentity(
  opts: PlanOptions,
  namespace: string,
  serviceAccount: string,
): { objects: Objects; identity: string | undefined } {
  if (!opts.asServiceAccount) return { objects: opts.objects, identity: opts.self };
  const user = serviceAccountUser({ metadata: { namespace }, spec: { serviceAccountName: serviceAccount } });
  return { objects: opts.objects.as(user), identity: user };
}

async function planOne(
  objects: Objects,
  txn: Transaction,
  index: number,
  change: Change,
  opts: PlanOptions,
): Promise<PlannedChange> {
  const { asServiceAccount } = opts;
  const namespace = txn.metadata.namespace ?? 'default';
  let label = `${change.target.apiVersion} ${describeTarget({ ...change.target, namespace: change.target.namespace ?? namespace })}`;
  try {
    const mapping = await objects.discovery.mapping(change.target.apiVersion, change.target.kind);
    const item: ChangeItem = {
      index,
      change,
      target: resolveTarget(change.target, namespace, mapping.namespaced),
    };
    label = statusTarget(item.target);
    // The controller's own verdicts, in its order: the dry run, then the prior state.
    const ctx = { txn: beforeCreation(txn), objects };
    const dryRun = await dryRunVerdict(ctx, item);
    if ('reason' in dryRun) return refused(index, change, label, dryRun, asServiceAccount);
    const read = await readPrior(ctx, item);
    if ('reason' in read) return refused(index, change, label, read, asServiceAccount);
    const planned = withCurrentStamp(dryRun.planned, read.prior);
    // By the target's kind, sealed (sopsContent) or not: a plain change to a Secret or a
    // --sops-kinds kind still reads the live object, whose content is secret.
    const { apiVersion, kind } = change.target;
    const secretContent = sopsKindRefusal(apiVersion, kind, opts.sopsKinds) === undefined;
    return planChange(index, change.type, label, read.prior, planned, secretContent);
  } catch (e) {
    return failedChange(index, change.type, label, explain(e, asServiceAccount));
  }
}

function refused(
  index: number,
  change: Change,
  label: string,
  refusal: ChangeRefusal,
  asServiceAccount: boolean,
): PlannedChange {
  const hint = asServiceAccount && /Forbidden: .*impersonate/.test(refusal.message) ? IMPERSONATION_HINT : '';
  return failedChange(index, change.type, label, refusal.message + hint, refusal.reason);
}

const IMPERSONATION_HINT =
  ' (you may not impersonate the ServiceAccount: plan as yourself with --no-as-service-account)';

function explain(e: unknown, asServiceAccount: boolean): string {
  if (e instanceof KubeApiError) {
    const hint =
      e.status === 403 && asServiceAccount && /impersonate/.test(e.serverMessage) ? IMPERSONATION_HINT : '';
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
