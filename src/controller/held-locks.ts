/**
 * The locks this process holds, per transaction uid, so a transaction that waits for a lock, or
 * goes from prepare to commit, does not re-read Leases it already holds. After a restart it is
 * empty and locks are re-adopted from the Leases themselves (their holder names the uid).
 */
import type { HeldLock } from '../locks/lease-locks.ts';

export class HeldLocks {
  readonly #byTransaction = new Map<string, Map<string, HeldLock>>();

  #of(uid: string): Map<string, HeldLock> {
    let locks = this.#byTransaction.get(uid);
    if (!locks) {
      locks = new Map();
      this.#byTransaction.set(uid, locks);
    }
    return locks;
  }

  get(uid: string, namespace: string, name: string): HeldLock | undefined {
    return this.#byTransaction.get(uid)?.get(`${namespace}/${name}`);
  }

  set(uid: string, lock: HeldLock): void {
    this.#of(uid).set(`${lock.namespace}/${lock.name}`, lock);
  }

  all(uid: string): HeldLock[] {
    return [...(this.#byTransaction.get(uid)?.values() ?? [])];
  }

  forget(uid: string): void {
    this.#byTransaction.delete(uid);
  }
}
