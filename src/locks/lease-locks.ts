/**
 * Lock Leases: taken with a create (or a conditional takeover of an expired Lease), renewed with
 * a conditional replace, released with one delete-collection per namespace.
 */
import {
  LABEL_MANAGED_BY,
  LABEL_TRANSACTION,
  LABEL_TRANSACTION_UID,
  MANAGED_BY,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isAlreadyExists, isConflict, isForbidden, isNotFound } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';
import { expiresAt, holderIdentity, isFree, type LeaseSpec, microTime } from './lease-name.ts';

export interface LeaseObject extends KubeObject {
  spec: LeaseSpec;
}

export interface LockKey {
  namespace: string;
  name: string;
}

export interface HeldLock extends LockKey {
  resourceVersion: string;
  acquireTime: string;
  renewedAtMs: number;
  durationSeconds: number;
}

export type AcquireResult =
  | { held: true; lock: HeldLock; tookOver: boolean }
  | { held: false; holder: string; expiresAtMs: number | undefined };

export class LockLostError extends Error {
  override readonly name = 'LockLostError';
  constructor(lock: LockKey, detail: string) {
    super(`lock Lease ${lock.namespace}/${lock.name} was lost: ${detail}`);
  }
}

export type LockEvent = (
  operation: 'acquire' | 'renew' | 'release' | 'takeover',
  result: 'success' | 'conflict' | 'error',
) => void;

const leasePath = (namespace: string, name?: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases${name ? `/${name}` : ''}`;

export class LeaseLocks {
  readonly #client: KubeClient;
  readonly #now: () => number;
  readonly #onEvent: LockEvent;

  constructor(client: KubeClient, opts: { now?: () => number; onEvent?: LockEvent } = {}) {
    this.#client = client;
    this.#now = opts.now ?? Date.now;
    this.#onEvent = opts.onEvent ?? (() => {});
  }

  #leaseFor(txn: Transaction, key: LockKey, durationSeconds: number, previous?: LeaseObject): LeaseObject {
    const now = microTime(this.#now());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: key.name,
        namespace: key.namespace,
        ...(previous?.metadata.resourceVersion && { resourceVersion: previous.metadata.resourceVersion }),
        labels: {
          [LABEL_MANAGED_BY]: MANAGED_BY,
          [LABEL_TRANSACTION]: txn.metadata.name,
          [LABEL_TRANSACTION_UID]: txn.metadata.uid ?? '',
        },
      },
      spec: {
        holderIdentity: holderIdentity(txn),
        leaseDurationSeconds: durationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions:
          (previous?.spec.leaseTransitions ?? 0) +
          (previous && previous.spec.holderIdentity !== holderIdentity(txn) ? 1 : 0),
      },
    };
  }

  #held(lease: LeaseObject, durationSeconds: number): HeldLock {
    return {
      namespace: lease.metadata.namespace ?? '',
      name: lease.metadata.name,
      resourceVersion: lease.metadata.resourceVersion ?? '',
      acquireTime: lease.spec.acquireTime ?? '',
      renewedAtMs: this.#now(),
      durationSeconds,
    };
  }

  /** Takes the lock, re-adopts it if this transaction already holds it, or reports its holder. */
  async acquire(txn: Transaction, key: LockKey, durationSeconds: number): Promise<AcquireResult> {
    try {
      const created = await this.#client.request<LeaseObject>({
        method: 'POST',
        path: leasePath(key.namespace),
        body: this.#leaseFor(txn, key, durationSeconds),
      });
      this.#onEvent('acquire', 'success');
      return { held: true, lock: this.#held(created, durationSeconds), tookOver: false };
    } catch (e) {
      if (!isAlreadyExists(e)) {
        this.#onEvent('acquire', 'error');
        throw e;
      }
    }
    const existing = await this.#client.request<LeaseObject>({
      method: 'GET',
      path: leasePath(key.namespace, key.name),
    });
    const mine = existing.spec.holderIdentity === holderIdentity(txn);
    if (!mine && !isFree(existing.spec, this.#now())) {
      this.#onEvent('acquire', 'conflict');
      return {
        held: false,
        holder: existing.spec.holderIdentity ?? '',
        expiresAtMs: expiresAt(existing.spec),
      };
    }
    // Ours already (a restart), or abandoned: take it over, conditionally on what we read.
    try {
      const replaced = await this.#client.request<LeaseObject>({
        method: 'PUT',
        path: leasePath(key.namespace, key.name),
        body: this.#leaseFor(txn, key, durationSeconds, existing),
      });
      this.#onEvent(mine ? 'acquire' : 'takeover', 'success');
      return { held: true, lock: this.#held(replaced, durationSeconds), tookOver: !mine };
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) {
        // Someone else moved first; report the current holder on the next attempt.
        this.#onEvent(mine ? 'acquire' : 'takeover', 'conflict');
        return {
          held: false,
          holder: existing.spec.holderIdentity ?? '',
          expiresAtMs: expiresAt(existing.spec),
        };
      }
      this.#onEvent('takeover', 'error');
      throw e;
    }
  }

  /** Extends a held lock; LockLostError if anyone else touched it since. */
  async renew(txn: Transaction, lock: HeldLock): Promise<HeldLock> {
    const body = this.#leaseFor(txn, lock, lock.durationSeconds);
    body.metadata.resourceVersion = lock.resourceVersion;
    if (lock.acquireTime) body.spec.acquireTime = lock.acquireTime;
    try {
      const current = await this.#client.request<LeaseObject>({
        method: 'PUT',
        path: leasePath(lock.namespace, lock.name),
        body,
      });
      this.#onEvent('renew', 'success');
      return this.#held(current, lock.durationSeconds);
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) {
        this.#onEvent('renew', 'conflict');
        throw new LockLostError(lock, isNotFound(e) ? 'it was deleted' : 'it was changed by someone else');
      }
      this.#onEvent('renew', 'error');
      throw e;
    }
  }

  /** Releases every lock of a transaction in these namespaces: one request per namespace. */
  async releaseAll(txn: Transaction, namespaces: Iterable<string>): Promise<void> {
    for (const namespace of new Set(namespaces)) {
      try {
        await this.#client.request({
          method: 'DELETE',
          path: leasePath(namespace),
          query: { labelSelector: `${LABEL_TRANSACTION_UID}=${txn.metadata.uid}` },
        });
        this.#onEvent('release', 'success');
      } catch (e) {
        if (isNotFound(e)) continue; // the namespace is gone, and its Leases with it
        // Janus was never granted this namespace (or no longer is), so it holds no Lease it could
        // delete; one taken before the grant was withdrawn expires after its lockTimeout.
        if (isForbidden(e)) {
          this.#onEvent('release', 'error');
          continue;
        }
        this.#onEvent('release', 'error');
        throw e;
      }
    }
  }
}
