/**
 * LockTable: the locks the API server enforces (docs/security.md, "Locks that block"). One per
 * namespace, named janus-locks, beside the targets it locks (in the controller's namespace for
 * cluster-scoped targets): a map from a target's key, `<resource>[.<group>]/<name>` as an
 * admission request names it, to the Transaction that holds it. The admission policy janus-locks
 * (manifests/policy/locks.yaml) takes this object as its parameter and refuses a write to a key
 * it holds from anyone but the holder's own writes. Only the controller writes it: each
 * Transaction its own entries, by server-side apply under a field manager of its own.
 */
import type { ObjectMeta } from '../meta.ts';
import type { OpenApiSchema } from '../schema.ts';
import { janusCrd } from './crd-envelope.ts';
import { GROUP, VERSION } from './transaction.ts';

export const LOCK_TABLE_KIND = 'LockTable';
export const LOCK_TABLE_PLURAL = 'locktables';
export const LOCK_TABLE_API_VERSION = `${GROUP}/${VERSION}`;
/** Every table has this name: the policy's bindings name it (paramRef), whatever the namespace. */
export const LOCK_TABLE_NAME = 'janus-locks';
/** Most entries one table holds; past it a transaction waits for room (a lock held elsewhere). */
export const MAX_LOCK_TABLE_ENTRIES = 2048;

/**
 * The user extra the controller sets, to the Transaction's uid, when it impersonates the
 * Transaction's ServiceAccount: the policy lets through the holder's own writes by it, not every
 * pod that runs as the same ServiceAccount.
 */
export const TRANSACTION_UID_EXTRA = `${GROUP}/transaction-uid`;

/** The namespace label that turns the locks on there: Deny, Warn or Audit. */
export const LOCKS_NAMESPACE_LABEL = `${GROUP}/locks`;

/** Who holds a target, as the refusal message shows it and the policy checks it. */
export interface LockEntry {
  /** The Transaction's name and namespace: `janus status <transaction> -n <namespace>`. */
  transaction: string;
  namespace: string;
  uid: string;
  /** The ServiceAccount user the holder writes as. */
  user: string;
  /** What the holder does with the lock: Committing, Verifying or RollingBack. */
  phase: string;
}

export interface LockTable {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: { locks?: Record<string, LockEntry> };
}

const text = (description: string, maxLength: number): OpenApiSchema => ({
  type: 'string',
  description,
  maxLength,
});

const entrySchema: OpenApiSchema = {
  type: 'object',
  description: 'The Transaction holding the target.',
  // One value, owned whole by the Transaction that applied it: a takeover replaces it whole, and
  // the previous holder keeps no field of it that would outlive the new holder's release.
  'x-kubernetes-map-type': 'atomic',
  required: ['transaction', 'namespace', 'uid', 'user', 'phase'],
  properties: {
    transaction: text("the Transaction's name", 63),
    namespace: text("the Transaction's namespace", 63),
    uid: text("the Transaction's uid", 128),
    user: text('the ServiceAccount user its writes are made as', 317),
    phase: text('what it does with the lock: Committing, Verifying or RollingBack', 32),
  },
};

export function lockTableCrd() {
  return janusCrd({
    kind: LOCK_TABLE_KIND,
    plural: LOCK_TABLE_PLURAL,
    singular: 'locktable',
    description:
      'A LockTable lists the targets Transactions hold in its namespace (in the controller namespace: the cluster-scoped ones); the admission policy janus-locks refuses writes to them from anyone but the holder. Written by the Janus controller only.',
    spec: {
      type: 'object',
      properties: {
        locks: {
          type: 'object',
          description:
            'Target (<resource>[.<group>]/<name>, as an admission request names it) to the Transaction holding it.',
          maxProperties: MAX_LOCK_TABLE_ENTRIES,
          additionalProperties: entrySchema,
        },
      },
    },
    specOptional: true,
    columns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
  });
}
