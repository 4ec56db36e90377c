/**
 * Sees every transaction event and hands it to the routes: phase changes of this installation's
 * Transactions (the process's Transaction cache, which the controller and the results reporter
 * follow too), and the rejections the Git side records. An event is the result record of the
 * transaction as it stands (render-transaction.ts), read back by event.ts: the notification says
 * what the results branch says. A finished Transaction is cached compact, which keeps all that an
 * event reads (phase, progress, message, changes, source: controller/transaction-cache.ts), so
 * an event costs no request.
 *
 * Never in the saga's way: informer handlers only queue; delivery is delivery.ts's. What a
 * restart keeps: a Transaction listed at start whose notified phase began less than
 * `replayWindowMs` ago is notified again, to each provider the ledger (ledger-store.ts) does not
 * record as having received it already: once in practice, a duplicate only when a kill falls
 * between a receiver's answer and the ledger's write (docs/operations.md).
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { TransactionCache } from '../controller/transaction-cache.ts';
import type { Logger } from '../log/index.ts';
import { renderTransactionResult } from '../results/render-transaction.ts';
import type { ResultContext } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import type { NotifyConfig } from './config.ts';
import { DeliveryQueue, type DeliveryResult } from './delivery.ts';
import {
  type DriftFacts,
  driftEvent,
  eventFromRecord,
  isNotifiedPhase,
  type NotificationEvent,
  printableEvent,
} from './event.ts';
import type { LedgerStore } from './ledger-store.ts';
import { messageOf } from './message.ts';
import { payloadFor } from './payloads/index.ts';
import { post } from './post.ts';
import { providersFor } from './routing.ts';

/** A phase reached less than this before a (re)start is notified again. */
export const DEFAULT_REPLAY_WINDOW_MS = 5 * 60_000;

export interface NotifierOptions {
  /** This installation's Transactions (the process's cache; the manager starts and stops it). */
  cache: TransactionCache;
  /** The settings in force (re-read when the file changes). */
  config(): Promise<NotifyConfig>;
  context: ResultContext;
  log: Logger;
  onDelivery(provider: string, result: DeliveryResult): void;
  /** What earlier terms delivered; none: every replayed event is sent again. */
  ledger?: LedgerStore | undefined;
  replayWindowMs?: number;
  clock?: () => Date;
  /**
   * Who made a source commit (janus run: read from the repository it fetched); the result records
   * do not carry it. A failure leaves the author out, it never holds a notification back.
   */
  authorOf?: ((commit: string) => Promise<string | undefined>) | undefined;
}

export class Notifier {
  readonly deliveries: DeliveryQueue;
  readonly #o: NotifierOptions;
  /** Per "<namespace>/<name>", the event last routed: a resync or relist repeats nothing. */
  readonly #routed = new Map<string, string>();
  /** Events are routed in the order seen, so each provider's queue gets them in that order. */
  #chain: Promise<void> = Promise.resolve();
  #unregister: (() => void) | undefined;

  constructor(options: NotifierOptions) {
    this.#o = options;
    const { ledger } = options;
    this.deliveries = new DeliveryQueue({
      post,
      onResult: options.onDelivery,
      onSent: ledger && ((provider, event) => ledger.record(provider, event)),
      log: options.log,
    });
  }

  /** Follows the cache: what it holds already counts as listed at a (re)start. */
  start(): void {
    this.#unregister = this.#o.cache.addHandlers({
      onAdd: (txn, key) => {
        if (this.#recent(txn)) this.#observe(txn, key);
      },
      onUpdate: (old, txn, key) => {
        if (old.status?.phase !== txn.status?.phase) this.#observe(txn, key);
      },
      onDelete: (_txn, key) => void this.#routed.delete(key),
    });
  }

  /** A record the Git side queued for the results branch: a rejected directory notifies. */
  recordWritten(record: ResultRecord): void {
    const event = eventFromRecord(record, this.#now());
    if (event?.phase === 'Rejected') this.#route(event);
  }

  /** A Source's drift found, changed or gone (drift-monitor.ts): the Drifted or DriftResolved event. */
  drifted(facts: DriftFacts): void {
    this.#route(driftEvent(facts));
  }

  /** Resolves once everything routed so far has been delivered or given up (tests). */
  async idle(): Promise<void> {
    await this.#chain;
    await this.deliveries.idle();
    await this.#o.ledger?.idle();
  }

  async stop(): Promise<void> {
    this.#unregister?.();
    await this.#chain;
    await this.deliveries.stop();
    await this.#o.ledger?.idle();
  }

  #now(): Date {
    return this.#o.clock?.() ?? new Date();
  }

  /** Whether a Transaction seen at a (re)list reached its phase within the replay window. */
  #recent(txn: Transaction): boolean {
    const at = phaseSince(txn);
    const window = this.#o.replayWindowMs ?? DEFAULT_REPLAY_WINDOW_MS;
    return at !== undefined && this.#now().getTime() - at.getTime() < window;
  }

  #observe(txn: Transaction, key: string): void {
    const phase = txn.status?.phase;
    if (!phase || !isNotifiedPhase(phase)) return;
    const time = phaseSince(txn) ?? this.#now();
    const event = eventFromRecord(renderTransactionResult(txn, this.#o.context), time);
    if (!event || this.#routed.get(key) === event.id) return;
    this.#routed.set(key, event.id);
    this.#route(event);
  }

  #route(event: NotificationEvent): void {
    this.#chain = this.#chain
      .then(async () => {
        const config = await this.#o.config();
        await this.#o.ledger?.load();
        const routed = providersFor(event, config);
        const providers = routed.filter((p) => !this.#o.ledger?.has(p.name, event.id));
        if (providers.length < routed.length) {
          const delivered = routed.filter((p) => !providers.includes(p)).map((p) => p.name);
          this.#o.log.info(
            { event: event.id, providers: delivered },
            'notification not sent again: the delivery ledger records it delivered before a restart',
          );
        }
        if (providers.length === 0) return;
        const full = printableEvent(await this.#withAuthor(event));
        const message = messageOf(full, config);
        for (const provider of providers)
          this.deliveries.enqueue(provider, payloadFor(provider, full, message), full.id);
      })
      .catch((err: unknown) => this.#o.log.error({ err, event: event.id }, 'notification not routed'));
  }

  async #withAuthor(event: NotificationEvent): Promise<NotificationEvent> {
    if (event.author || !event.commit || !this.#o.authorOf) return event;
    const author = await this.#o.authorOf(event.commit).catch((err: unknown) => {
      this.#o.log.debug({ err, commit: event.commit }, 'author of the source commit not read');
      return undefined;
    });
    return author ? { ...event, author } : event;
  }
}

/** When the Transaction entered its phase: completedAt, else its newest condition's transition. */
export function phaseSince(txn: Transaction): Date | undefined {
  const times = [txn.status?.completedAt, ...(txn.status?.conditions ?? []).map((c) => c.lastTransitionTime)]
    .map((t) => Date.parse(t ?? ''))
    .filter((t) => !Number.isNaN(t));
  return times.length > 0 ? new Date(Math.max(...times)) : undefined;
}
