/**
 * Taking and keeping a transaction's locks. Locks are taken in one global order (by Lease
 * namespace and name), so two transactions wanting overlapping targets never deadlock; a lock
 * held by another transaction means waiting, not failing, until the deadline.
 */
import { LockLostError } from '../locks/lease-locks.ts';
import { durationSeconds, holderTransaction, needsRenewal } from '../locks/lease-name.ts';
import { targetKey } from '../saga/targets.ts';
import { compareCodeUnits } from '../text/order.ts';
import type { Item, SagaRun } from './context.ts';

export type LockOutcome = { held: true } | { held: false; message: string; retryInMs: number };

/** How often a waiting transaction looks again; the lock may free any time. */
const MAX_WAIT_POLL_MS = 2_000;
const MIN_WAIT_POLL_MS = 250;

function sortedLocks(items: readonly Item[]) {
  const unique = new Map(items.map((i) => [`${i.lock.namespace}/${i.lock.name}`, { ...i.lock, item: i }]));
  return [...unique.entries()].sort(([a], [b]) => compareCodeUnits(a, b)).map(([, v]) => v);
}

/**
 * Takes (or re-adopts, or renews) every lock the items need. Git order (`queuedAhead`) decides
 * only who takes a contested lock first: a transaction that already holds some of its locks, or
 * is undoing what it committed (`rollingBack`), never waits for it, since it would wait with its
 * locks held for one that waits for those very locks, until a deadline.
 */
export async function holdLocks(
  run: SagaRun,
  items: readonly Item[],
  { rollingBack = false }: { rollingBack?: boolean } = {},
): Promise<LockOutcome> {
  const { deps, txn } = run;
  const uid = txn.metadata.uid ?? '';
  const ordered = !rollingBack && deps.heldLocks.all(uid).length === 0;
  const ahead = ordered && (await deps.queuedAhead(txn, new Set(items.map((i) => targetKey(i.target)))));
  if (ahead) {
    return {
      held: false,
      message: `waiting for ${ahead}, which comes first in Git order`,
      retryInMs: MAX_WAIT_POLL_MS,
    };
  }
  const duration = durationSeconds(txn.spec.lockTimeout ?? '5m');
  for (const lock of sortedLocks(items)) {
    const held = deps.heldLocks.get(uid, lock.namespace, lock.name);
    if (held && !needsRenewal(held.renewedAtMs, held.durationSeconds, deps.now())) continue;
    if (held) {
      try {
        await deps.heldLocks.renew(txn, held);
        continue;
      } catch (e) {
        if (!(e instanceof LockLostError)) throw e;
        // Lost while waiting for other locks: try to take it again below.
      }
    }
    const result = await deps.locks.acquire(txn, lock, duration);
    if (result.held) {
      deps.heldLocks.set(txn, result.lock);
      continue;
    }
    const until = result.expiresAtMs !== undefined ? result.expiresAtMs - deps.now() : MAX_WAIT_POLL_MS;
    return {
      held: false,
      message: `waiting for lock ${lock.namespace}/${lock.name} on ${lock.item.target.kind} ${lock.item.target.name}, held by transaction ${holderTransaction(result.holder)}`,
      retryInMs: Math.min(MAX_WAIT_POLL_MS, Math.max(MIN_WAIT_POLL_MS, until)),
    };
  }
  return { held: true };
}

/**
 * Before a commit: confirms the item's lock is still ours, renewing it when a third of its
 * duration has passed. Throws LockLostError when someone else took it.
 */
export async function confirmLock(run: SagaRun, item: Item): Promise<void> {
  const { deps, txn } = run;
  const uid = txn.metadata.uid ?? '';
  const held = deps.heldLocks.get(uid, item.lock.namespace, item.lock.name);
  if (held) {
    // Renewed in the background while held; this catches a renewal that is overdue (the
    // process was paused) before a write relies on the lock.
    if (needsRenewal(held.renewedAtMs, held.durationSeconds, deps.now()))
      await deps.heldLocks.renew(txn, held);
    return;
  }
  // After a restart: re-adopt the Lease if it still names us.
  const result = await deps.locks.acquire(txn, item.lock, durationSeconds(txn.spec.lockTimeout ?? '5m'));
  if (!result.held) throw new LockLostError(item.lock, `now held by ${holderTransaction(result.holder)}`);
  if (result.tookOver)
    throw new LockLostError(item.lock, 'it expired while this transaction was not running');
  deps.heldLocks.set(txn, result.lock);
}

/** Releases every lock of the transaction (one request per namespace) and forgets them. */
export async function releaseLocks(run: SagaRun): Promise<void> {
  run.deps.log.debug({ transaction: run.name, namespaces: [...run.lockNamespaces()] }, 'releasing locks');
  await run.deps.locks.releaseAll(run.txn, run.lockNamespaces());
  run.deps.heldLocks.forget(run.txn.metadata.uid ?? '');
}
