/**
 * The locks this process holds, per transaction uid, kept alive in the background.
 *
 * A held Lease is renewed a third of the way through its duration by a timer of its own, not
 * between saga steps: however long one request or one step takes (a slow admission webhook, a
 * slow API server), a live holder keeps its lock. Only a holder that stopped (a crash, a
 * partition) lets it expire. Cost: one PUT per held Lease every lockTimeout/3, only while held.
 *
 * After a restart the map is empty and locks are re-adopted from the Leases themselves (their
 * holder names the uid).
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { type HeldLock, type LeaseLocks, LockLostError } from '../locks/lease-locks.ts';
import type { HolderPhase } from '../locks/lock-table.ts';
import type { Logger } from '../log/index.ts';

/** After a failed renewal (not a lost lock: the network, the server), try again this soon. */
const RETRY_MS = 1_000;

interface Entry {
  lock: HeldLock;
  txn: Pick<Transaction, 'metadata'>;
  timer: NodeJS.Timeout | undefined;
  renewing: Promise<HeldLock> | undefined;
}

export interface HeldLocksOptions {
  locks: LeaseLocks;
  now: () => number;
  log: Logger;
}

export class HeldLocks {
  readonly #opts: HeldLocksOptions;
  readonly #byTransaction = new Map<string, Map<string, Entry>>();
  /** Transactions whose changes passed their dry runs in this process, so a lock wait skips them. */
  readonly #authorized = new Set<string>();
  /** What each transaction's LockTable entries say, as this process last wrote them. */
  readonly #tablePhases = new Map<string, HolderPhase>();
  #stopped = false;

  constructor(opts: HeldLocksOptions) {
    this.#opts = opts;
  }

  isAuthorized(uid: string): boolean {
    return this.#authorized.has(uid);
  }

  markAuthorized(uid: string): void {
    this.#authorized.add(uid);
  }

  tablePhase(uid: string): HolderPhase | undefined {
    return this.#tablePhases.get(uid);
  }

  /** The entries say `phase` now; undefined: unknown (a lock was taken again), write them again. */
  setTablePhase(uid: string, phase: HolderPhase | undefined): void {
    if (phase) this.#tablePhases.set(uid, phase);
    else this.#tablePhases.delete(uid);
  }

  get(uid: string, namespace: string, name: string): HeldLock | undefined {
    return this.#byTransaction.get(uid)?.get(`${namespace}/${name}`)?.lock;
  }

  /** Records a lock just taken (or renewed) and schedules its next renewal. */
  set(txn: Pick<Transaction, 'metadata'>, lock: HeldLock): void {
    const uid = txn.metadata.uid ?? '';
    let locks = this.#byTransaction.get(uid);
    if (!locks) {
      locks = new Map();
      this.#byTransaction.set(uid, locks);
    }
    const key = `${lock.namespace}/${lock.name}`;
    const previous = locks.get(key);
    clearTimeout(previous?.timer);
    const entry: Entry = { lock, txn, timer: undefined, renewing: previous?.renewing };
    locks.set(key, entry);
    this.#schedule(uid, key, entry, renewalDueInMs(lock, this.#opts.now()));
  }

  /**
   * Renews a held lock now; concurrent callers (a step and the background timer) share one
   * request, so they never race each other's resourceVersion. LockLostError if someone else
   * took it.
   */
  async renew(txn: Pick<Transaction, 'metadata'>, lock: HeldLock): Promise<HeldLock> {
    const uid = txn.metadata.uid ?? '';
    const key = `${lock.namespace}/${lock.name}`;
    const entry = this.#byTransaction.get(uid)?.get(key);
    if (entry?.renewing) return entry.renewing;
    const renewing = this.#opts.locks.renew(txn as Transaction, entry?.lock ?? lock);
    if (entry) entry.renewing = renewing;
    try {
      const renewed = await renewing;
      // Released meanwhile: do not bring it back.
      if (this.#byTransaction.get(uid)?.get(key) === entry && entry) {
        entry.renewing = undefined;
        this.set(txn, renewed);
      }
      return renewed;
    } catch (e) {
      if (entry) entry.renewing = undefined;
      if (e instanceof LockLostError) this.#drop(uid, key);
      throw e;
    }
  }

  all(uid: string): HeldLock[] {
    return [...(this.#byTransaction.get(uid)?.values() ?? [])].map((e) => e.lock);
  }

  /** The transaction released its locks (or ended): stop renewing them. */
  forget(uid: string): void {
    for (const entry of this.#byTransaction.get(uid)?.values() ?? []) clearTimeout(entry.timer);
    this.#byTransaction.delete(uid);
    this.#authorized.delete(uid);
    this.#tablePhases.delete(uid);
  }

  /** The controller stops (shutdown, lost leadership): renew nothing more. */
  stop(): void {
    this.#stopped = true;
    for (const uid of [...this.#byTransaction.keys()]) this.forget(uid);
  }

  #schedule(uid: string, key: string, entry: Entry, inMs: number): void {
    if (this.#stopped) return;
    entry.timer = setTimeout(() => {
      if (this.#byTransaction.get(uid)?.get(key) !== entry) return;
      this.renew(entry.txn, entry.lock).catch((e: unknown) => {
        if (e instanceof LockLostError) {
          this.#opts.log.warn({ lock: key, transaction: uid, reason: e.message }, 'lock lost while held');
          return;
        }
        this.#opts.log.warn({ lock: key, err: e }, 'could not renew a lock; retrying');
        if (this.#byTransaction.get(uid)?.get(key) === entry) this.#schedule(uid, key, entry, RETRY_MS);
      });
    }, inMs);
    entry.timer.unref();
  }

  #drop(uid: string, key: string): void {
    const locks = this.#byTransaction.get(uid);
    clearTimeout(locks?.get(key)?.timer);
    locks?.delete(key);
  }
}

/** A third of the way through the lease, counted from the last renewal. */
function renewalDueInMs(lock: HeldLock, nowMs: number): number {
  return Math.max(0, lock.renewedAtMs + (lock.durationSeconds * 1000) / 3 - nowMs);
}
