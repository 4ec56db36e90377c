/**
 * Applies the retention policy (select.ts) on the leader: every sweep, it judges the finished
 * Transactions in the controller's cache (no LIST of its own) and deletes the prunable ones,
 * oldest first, a bounded number per sweep. A delete is conditional on the uid and
 * resourceVersion the verdict saw, so a Transaction that changed since (a rollback requested
 * that instant) or a re-created namesake is never deleted by mistake; a crash between sweeps
 * loses nothing: the next leader judges again. The Transaction's finalizer and the garbage
 * collector do the rest (its rollback store goes with it).
 */
import { API_VERSION, KIND, type Transaction } from '../api/v1alpha1/index.ts';
import { isConflict, isForbidden, isNotFound } from '../kube/errors.ts';
import type { Objects } from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import { finishedAt, type RetentionPolicy, retentionVerdicts } from './select.ts';

/** What the process decides: the policy, and how to tell that an outcome is safely recorded. */
export interface RetentionOptions {
  policy: RetentionPolicy;
  /** Whether the outcome is on the results branch (true for a Transaction not from Git). */
  isRecorded(txn: Transaction): boolean;
  /** Between sweeps. Default 1 min. */
  intervalMs?: number;
  onPruned?(): void;
}

export interface PrunerOptions extends RetentionOptions {
  objects: Objects;
  /** The Transactions the controller has cached. */
  list(): readonly Transaction[];
  log: Logger;
  /** Most deletions per sweep, so a first sweep over a long history does not burst. Default 100. */
  maxPerSweep?: number;
  now?: () => number;
}

export class Pruner {
  readonly #o: PrunerOptions;
  #timer: NodeJS.Timeout | undefined;
  /** Namespaces where we may not delete Transactions (janus-tenant not bound): skipped this term. */
  readonly #forbidden = new Set<string>();
  #sweeping: Promise<number> | undefined;

  constructor(options: PrunerOptions) {
    this.#o = options;
  }

  start(): void {
    this.#timer = setInterval(() => void this.sweep(), this.#o.intervalMs ?? 60_000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }

  /** One sweep (never two at once); resolves to the number of Transactions deleted. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweep().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #sweep(): Promise<number> {
    const transactions = this.#o.list();
    const now = (this.#o.now ?? Date.now)();
    const verdicts = retentionVerdicts(transactions, this.#o.policy, now, this.#o.isRecorded);
    const prunable = transactions
      .filter((txn, i) => verdicts[i]?.prune && !this.#forbidden.has(txn.metadata.namespace ?? ''))
      .sort((a, b) => (finishedAt(a) ?? 0) - (finishedAt(b) ?? 0))
      .slice(0, this.#o.maxPerSweep ?? 100);
    let pruned = 0;
    for (const txn of prunable) {
      if (await this.#prune(txn)) pruned++;
    }
    if (pruned > 0) this.#o.log.info({ pruned, policy: this.#o.policy }, 'finished Transactions pruned');
    return pruned;
  }

  async #prune(txn: Transaction): Promise<boolean> {
    const { name, namespace, uid, resourceVersion } = txn.metadata;
    try {
      await this.#o.objects.delete(
        { apiVersion: API_VERSION, kind: KIND, name, namespace },
        { preconditions: { uid, resourceVersion }, propagationPolicy: 'Background' },
      );
      this.#o.log.debug(
        {
          transaction: `${namespace}/${name}`,
          phase: txn.status?.phase,
          completedAt: txn.status?.completedAt,
        },
        'Transaction pruned (retention); its record stays on the results branch',
      );
      this.#o.onPruned?.();
      return true;
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) return false; // changed or gone since: judged again next sweep
      if (isForbidden(error)) {
        this.#forbidden.add(namespace ?? '');
        this.#o.log.info(
          { namespace, err: error },
          'finished Transactions in this namespace are kept: Janus may not delete them there (is janus-tenant bound?)',
        );
        return false;
      }
      this.#o.log.warn({ err: error, transaction: `${namespace}/${name}` }, 'cannot prune a Transaction');
      return false;
    }
  }
}
