/**
 * What a change set and what its undo restores, as a diff: from the prior state in the rollback
 * store (what a rollback puts back) to what the change wrote. Read with the user's credentials
 * and only when asked (a page lists changes without reading the store): a user who may not
 * read the store's ConfigMaps or Secrets gets the API server's refusal instead. The content of a
 * target whose kind's content is secret (a Secret's values; all but the identity of a kind
 * --sops-kinds allows) is masked on both sides and never compared, as `janus plan` masks it.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { desiredObject } from '../changes/desired.ts';
import { sopsKindRefusal } from '../changes/sops-kinds.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import { RollbackStore } from '../rollback-store/store.ts';
import { describeTarget, resolveTarget } from '../saga/targets.ts';
import { diffObjects, isSecret, VALUES_NOT_COMPARED } from '../yaml/manifest-diff.ts';

export interface ChangeDiff {
  index: number;
  /** The unified diff, from the prior state to what the change set ('' when they match). */
  diff: string;
  /** Said instead of a diff, or beside it. */
  note?: string;
}

/**
 * `sopsKinds`: the kinds besides Secret whose content is secret (janus run's --sops-kinds,
 * JANUS_SOPS_KINDS, as janus ui is given it).
 */
export async function changeDiff(
  objects: Objects,
  txn: Transaction,
  index: number,
  sopsKinds: readonly string[],
): Promise<ChangeDiff> {
  const change = txn.spec.changes[index];
  const item = txn.status?.items?.[index];
  if (!change) throw new RangeError(`${txn.metadata.namespace}/${txn.metadata.name} has no change ${index}`);
  if (!item?.prepared || !txn.status?.rollbackRef) {
    return { index, diff: '', note: 'not prepared yet: the prior state is read when the change is prepared' };
  }
  const mapping = await objects.discovery.mapping(change.target.apiVersion, change.target.kind);
  const target = resolveTarget(change.target, txn.metadata.namespace ?? 'default', mapping.namespaced);
  const store = await new RollbackStore(objects.client).open(txn);
  const { prior } = await store.snapshot(index, {
    target: { ...change.target, namespace: target.namespace },
    digest: item.snapshotDigest,
  });
  const what = describeTarget(target);
  if (change.sopsContent !== undefined) {
    return {
      index,
      diff: '',
      note: `${what}: its content is SOPS-encrypted; it is not decrypted to show it`,
    };
  }
  const desired =
    change.type === 'Delete' ? undefined : desiredObject(txn, { index, change, target }, undefined);
  const after = change.type === 'Patch' && prior && desired ? merged(prior, desired) : desired;
  const secretContent =
    sopsKindRefusal(change.target.apiVersion, change.target.kind, sopsKinds) === undefined;
  return diffOfChange(index, change.type, what, prior, after, secretContent);
}

/**
 * The diff from `prior` to `after`; `secretContent`: the target's kind's content is secret (a
 * Secret's values are masked whatever the caller says). Pure.
 */
export function diffOfChange(
  index: number,
  type: Transaction['spec']['changes'][number]['type'],
  what: string,
  prior: KubeObject | undefined,
  after: KubeObject | undefined,
  secretContent: boolean,
): ChangeDiff {
  const secret = secretContent || isSecret(prior) || isSecret(after);
  const notes = [
    ...(type === 'Patch'
      ? ['a Patch sets only the fields it names: shown merged into the prior state (lists replaced whole)']
      : []),
    ...(secret && prior && after ? [`${VALUES_NOT_COMPARED}: a changed value does not show`] : []),
  ];
  return {
    index,
    diff: diffObjects(
      prior,
      after,
      {
        from: prior ? `${what} before change ${index} (what a rollback restores)` : `${what} (absent before)`,
        to: after ? `${what} as change ${index} set it` : `${what} (deleted by change ${index})`,
      },
      { maskContent: secretContent },
    ),
    ...(notes.length > 0 && { note: notes.join('; ') }),
  };
}

/** `patch` laid over `base`: maps merged key by key, everything else replaced. */
function merged(base: KubeObject, patch: KubeObject): KubeObject {
  return mergeValues(base, patch) as KubeObject;
}

function mergeValues(base: unknown, patch: unknown): unknown {
  if (!isMap(base) || !isMap(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) out[key] = mergeValues(base[key], value);
  return out;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
