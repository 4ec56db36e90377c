/**
 * Taking and keeping a transaction's locks. Locks are taken in one global order (by Lease
 * namespace and name), so two transactions wanting overlapping targets never deadlock; a lock
 * held by another transaction means waiting, not failing, until the deadline. Once every Lease
 * is held, the transaction's LockTable entries make the API server refuse others' writes to the
 * targets (blockWrites); they go before the Leases on release.
 */
import { LockLostError } from '../locks/lease-locks.ts';
import { durationSeconds, holderTransaction, needsRenewal } from '../locks/lease-name.ts';
import type { HolderPhase } from '../locks/lock-table.ts';
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
  let acquired = false;
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
      acquired = true;
      continue;
    }
    const until = result.expiresAtMs !== undefined ? result.expiresAtMs - deps.now() : MAX_WAIT_POLL_MS;
    return {
      held: false,
      message: `waiting for lock ${lock.namespace}/${lock.name} on ${lock.item.target.kind} ${lock.item.target.name}, held by transaction ${holderTransaction(result.holder)}`,
      retryInMs: Math.min(MAX_WAIT_POLL_MS, Math.max(MIN_WAIT_POLL_MS, until)),
    };
  }
  // A lock taken (again) may have had another holder's entry meanwhile: write ours again.
  if (acquired) deps.heldLocks.setTablePhase(uid, undefined);
  return blockWrites(run, rollingBack ? 'RollingBack' : 'Committing');
}

/**
 * Makes the API server refuse others' writes to the targets whose Leases this process holds for
 * the transaction: its LockTable entries, saying `phase`, one apply per namespace; nothing when
 * this process already wrote them so. A table without room is waited for like a lock; one that
 * cannot be written (no LockTable CRD, a namespace that granted Janus no LockTable) leaves those
 * locks advisory, said once by a Warning Event.
 */
export async function blockWrites(run: SagaRun, phase: HolderPhase): Promise<LockOutcome> {
  const { deps, txn } = run;
  const uid = txn.metadata.uid ?? '';
  if (deps.heldLocks.tablePhase(uid) === phase) return { held: true };
  const held = new Set(deps.heldLocks.all(uid).map((l) => `${l.namespace}/${l.name}`));
  const keys = new Map<string, string[]>();
  for (const item of run.items) {
    if (!item.tableKey || !held.has(`${item.lock.namespace}/${item.lock.name}`)) continue;
    keys.set(item.lock.namespace, [...(keys.get(item.lock.namespace) ?? []), item.tableKey]);
  }
  for (const [namespace, list] of keys) {
    const result = await deps.lockTables.hold(txn, namespace, list, phase);
    if (result.kind === 'full')
      return { held: false, message: `waiting for room: ${result.message}`, retryInMs: MAX_WAIT_POLL_MS };
    if (result.kind === 'unavailable' && deps.heldLocks.tablePhase(uid) === undefined) {
      deps.log.warn({ transaction: run.name, namespace, reason: result.message }, 'locks not blocking');
      await run.event(
        'Warning',
        LOCKS_NOT_BLOCKING,
        `the API server will not refuse others' writes to the targets in namespace ${namespace}: ${result.message}`,
      );
    }
  }
  deps.heldLocks.setTablePhase(uid, phase);
  return { held: true };
}

/** Event reason: a namespace's LockTable could not be written, so its locks stay advisory. */
export const LOCKS_NOT_BLOCKING = 'LocksNotBlocking';

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

/**
 * Releases every lock of the transaction, its LockTable entries first, then its Leases (one
 * request each per namespace), and forgets them.
 */
export async function releaseLocks(run: SagaRun): Promise<void> {
  run.deps.log.debug({ transaction: run.name, namespaces: [...run.lockNamespaces()] }, 'releasing locks');
  await run.deps.lockTables.releaseAll(run.txn, run.lockNamespaces());
  await run.deps.locks.releaseAll(run.txn, run.lockNamespaces());
  run.deps.heldLocks.forget(run.txn.metadata.uid ?? '');
}
