/**
 * Drift of the sources (docs/sources.md, "Drift"), the requests: every `spec.drift.interval` each
 * live object of a Source's inventory is compared with its last applied render (drift-compare.ts),
 * as the source's ServiceAccount; the status, the metric and a notification say what was found
 * (drift-decision.ts), and with `drift.correct` a transaction puts it back (SourceSync's
 * correctDrift), not before the backoff after failed ones (`status.drift.correction.retryAfter`).
 *
 * Bounded and fair: one check at a time per source, at most `concurrency` across sources, the
 * most overdue first; each check paces its requests (`paceMs` between objects), so a source of
 * 512 objects takes a slot for a while but never the others'. No check starts while a source's
 * transaction is in flight, and a check whose source applied something meanwhile is dropped: its
 * status is written under SourceSync's lock of that source, against the Source read again.
 *
 * Where the last applied render comes from: the Apply changes of the source's Transactions, found
 * by identity and inventory digest (what was applied, whichever transaction applied it); only the
 * objects whose Transaction retention has removed are rendered again, at lastApplied's commit.
 * An object applied encrypted (`sopsContent`: a Secret of a render that decrypted SOPS files) is
 * decrypted with the namespace's keys, read as the source's ServiceAccount, found by its digest as
 * the others, compared, and put back by a correction as the same `sopsContent`; its decrypted
 * content lives only for the check (never in a status, a log line or a Transaction). Rendered
 * again, the SOPS files are not decrypted: such an object is then not compared.
 */
import {
  API_VERSION,
  KIND,
  LABEL_SOURCE,
  SOURCE_KIND,
  type Source,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { isConflict, isNotFound, KubeApiError } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import type { DriftFacts } from '../notify/event.ts';
import { sleep } from '../runtime/sleep.ts';
import { sourceFieldManager } from '../saga/targets.ts';
import { decryptSops } from '../sops/decrypt.ts';
import { driftedPaths, dryRunObject } from './drift-compare.ts';
import {
  afterCheck,
  appliedContents,
  type DriftCheck,
  type DriftedObject,
  driftNews,
  driftStatus,
  sourcesToCheck,
} from './drift-decision.ts';
import { identityKey } from './inventory.ts';
import type { SourceApi } from './source-api.ts';

/** What a person is told when a source's drift changes: src/notify's `Drifted` and `DriftResolved` events. */
export type DriftNotice = DriftFacts;

export interface DriftSettings {
  /** Checks at once across sources (default 2). */
  concurrency?: number;
  /** Pause between two objects' requests of one check, in ms (default 20). */
  paceMs?: number;
  /** How often due sources are looked for (one list of the Sources), in ms (default 30 s; a commit applied or a correction ended looks at once). */
  tickMs?: number;
  /** Test-only: every checked source's interval (JANUS_TEST_DRIFT_INTERVAL_MS); never in production. */
  intervalOverrideMs?: number;
}

export interface DriftMonitorOptions extends DriftSettings {
  /** The controller identity (Sources, Transactions); the objects are read as each source's ServiceAccount. */
  objects: Objects;
  api: SourceApi;
  digestKey(): Promise<Buffer>;
  /** Runs `write` under SourceSync's lock of the source `key` (never beside its step). */
  withSource<T>(key: string, write: () => Promise<T>): Promise<T>;
  /** The Source as drift wrote it (SourceSync's view of it). */
  onWritten(source: Source): void;
  /** The objects of the render at lastApplied's commit, when its Transactions are gone. */
  renderApplied?(source: Source): Promise<KubeObject[] | undefined>;
  /** The namespace's age identities, read as `source`'s ServiceAccount (AgeKeysError when it cannot). */
  ageKeys?(source: Source): Promise<readonly string[]>;
  /** Drift found, changed or gone. */
  onNews?(notice: DriftNotice): void;
  /** Corrects the drifted objects (drift.correct), under the source's lock; resolves once its transaction is created. */
  correct?(
    source: Source,
    drifted: readonly DriftedObject[],
    contents: ReadonlyMap<string, KubeObject>,
    sealed: ReadonlyMap<string, string>,
  ): Promise<void>;
  setMetric?(namespace: string, source: string, count: number | undefined): void;
  log: Logger;
  now?: () => Date;
}

/** Transactions read per page when looking for a source's applied contents (each up to 1 MiB). */
const TRANSACTION_PAGE = 8;
/** Decryptions of one object's `sopsContent` in a check (its newest Apply is nearly always the one). */
const MAX_DECRYPTS_PER_OBJECT = 2;
/** Characters of an API server's conflict message kept as a drifted object's detail. */
const MAX_DETAIL = 300;

export class DriftMonitor {
  readonly #o: DriftMonitorOptions;
  readonly #now: () => Date;
  readonly #running = new Set<string>();
  readonly #metricKeys = new Set<string>();
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(options: DriftMonitorOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** Starts looking for due sources (once). */
  start(): void {
    this.#loop ??= this.#run(this.#abort.signal);
  }

  /** Looks for due sources now (a transaction of a source ended). */
  nudge(): void {
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const tick = this.#o.tickMs ?? 30_000;
    while (!signal.aborted) {
      try {
        await this.#startDue(signal);
      } catch (error) {
        this.#o.log.warn({ err: error }, 'drift: the Sources could not be listed; tried again');
      }
      const woken = new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      await Promise.race([sleep(tick, signal), woken]);
    }
  }

  /** Starts the due checks, most overdue first, as far as the concurrency bound allows. */
  async #startDue(signal: AbortSignal): Promise<void> {
    const sources = await this.#o.api.list();
    const now = this.#now();
    this.#forgetMetrics(sources);
    const due = sourcesToCheck(
      sources,
      this.#running,
      this.#o.concurrency ?? 2,
      now,
      this.#o.intervalOverrideMs,
    );
    for (const source of due) {
      const key = keyOf(source);
      this.#running.add(key);
      void this.#checkAndWrite(source, signal)
        .catch((error: unknown) =>
          this.#o.log.warn({ source: key, err: error }, 'drift check failed; tried again'),
        )
        .finally(() => {
          this.#running.delete(key);
          this.nudge();
        });
    }
  }

  async #checkAndWrite(source: Source, signal: AbortSignal): Promise<void> {
    const key = keyOf(source);
    const { check, contents, sealed } = await this.#check(source, signal);
    if (signal.aborted) return;
    const written = await this.#o.withSource(key, async () => {
      const fresh = await this.#o.objects.find<Source>({
        apiVersion: API_VERSION,
        kind: SOURCE_KIND,
        namespace: source.metadata.namespace,
        name: source.metadata.name,
      });
      // Applied, attempting or correcting something since the check began: the check compared what was.
      if (!fresh || !sameApplied(source, fresh)) return undefined;
      const now = this.#now();
      const status = driftStatus(fresh.status ?? {}, check, now, fresh.metadata.generation);
      const out = await this.#o.api.writeStatus(fresh, status);
      this.#o.onWritten(out);
      // Corrected under the same lock: no commit's transaction can begin in between; after failed
      // corrections, not before their backoff has passed (the check itself runs every interval).
      const next = afterCheck(out, check.drifted.length, now);
      if (next.do === 'correct' && this.#o.correct)
        await this.#o.correct(out, check.drifted, contents, sealed);
      return {
        before: fresh.status?.drift,
        out,
        heldUntil: next.do === 'report' ? next.heldUntil : undefined,
      };
    });
    if (!written) {
      this.#o.log.debug({ source: key }, 'drift check dropped: the source applied a commit meanwhile');
      return;
    }
    const drift = written.out.status?.drift ?? {};
    this.#metricKeys.add(key);
    this.#o.setMetric?.(source.metadata.namespace ?? '', source.metadata.name, drift.count ?? 0);
    this.#o.log.info(
      {
        source: key,
        revision: check.revision,
        checked: check.checked,
        drifted: check.drifted.length,
        skipped: check.skipped,
        ...(written.heldUntil && {
          correctionAfter: written.heldUntil,
          correctionFailures: drift.correction?.failures,
        }),
        ...(check.drifted.length > 0 && {
          objects: check.drifted.slice(0, 8).map((d) => `${identityKey(d.object)} ${d.reason}: ${d.detail}`),
        }),
      },
      'drift checked',
    );
    const news = driftNews(written.before, drift);
    const condition = written.out.status?.conditions?.find((c) => c.type === 'Drifted');
    if (news)
      this.#o.onNews?.({
        namespace: source.metadata.namespace ?? '',
        source: source.metadata.name,
        news,
        count: drift.count ?? 0,
        message: condition?.message ?? '',
        revision: check.revision,
        checkedAt: drift.checkedAt ?? check.checkedAt.toISOString(),
      });
  }

  /** Compares every inventory object whose applied render is known with the live one. */
  async #check(
    source: Source,
    signal: AbortSignal,
  ): Promise<{ check: DriftCheck; contents: Map<string, KubeObject>; sealed: Map<string, string> }> {
    const status = source.status ?? {};
    const inventory = status.inventory ?? [];
    const namespace = source.metadata.namespace ?? '';
    const { found: contents, sealed } = await this.#contents(source);
    const manager = sourceFieldManager(namespace, source.metadata.name);
    const as = this.#o.objects.as(`system:serviceaccount:${namespace}:${source.spec.serviceAccountName}`);
    const drifted: DriftedObject[] = [];
    let checked = 0;
    let skipped = inventory.length - contents.size;
    for (const entry of inventory) {
      if (signal.aborted) break;
      const rendered = contents.get(identityKey(entry));
      if (!rendered) continue;
      const object = {
        apiVersion: entry.apiVersion,
        kind: entry.kind,
        namespace: entry.namespace,
        name: entry.name,
      };
      try {
        const found = await compareOne(as, rendered, manager);
        checked++;
        if (found) drifted.push({ object, ...found });
      } catch (error) {
        skipped++;
        this.#o.log.warn(
          { source: keyOf(source), object: identityKey(entry), err: error },
          'drift: object not compared',
        );
      }
      await sleep(this.#o.paceMs ?? 20, signal);
    }
    return {
      check: {
        checkedAt: this.#now(),
        revision: status.lastApplied?.revision ?? '',
        checked,
        drifted,
        skipped,
      },
      contents,
      sealed,
    };
  }

  /**
   * The last applied render of each inventory object: from the source's Transactions (decrypted
   * when applied encrypted: `sealed` holds their `sopsContent`), else rendered again.
   */
  async #contents(source: Source): Promise<{ found: Map<string, KubeObject>; sealed: Map<string, string> }> {
    const inventory = source.status?.inventory ?? [];
    const key = await this.#o.digestKey();
    const found = new Map<string, KubeObject>();
    const sealed = new Map<string, string>();
    const opener = this.#opener(source);
    let token: string | undefined;
    do {
      const page = await this.#o.objects.list<Transaction>(API_VERSION, KIND, source.metadata.namespace, {
        labelSelector: `${LABEL_SOURCE}=${source.metadata.name}`,
        limit: String(TRANSACTION_PAGE),
        ...(token && { continue: token }),
      });
      const wanted = inventory.filter((e) => !found.has(identityKey(e)));
      const { transactions, encrypted } = await opener.open(page.items, wanted);
      for (const [k, v] of appliedContents(wanted, transactions, key).found) {
        found.set(k, v);
        const sopsContent = encrypted.get(v);
        if (sopsContent !== undefined) sealed.set(k, sopsContent);
      }
      token = page.metadata?.continue || undefined;
    } while (token && found.size < inventory.length);
    if (found.size < inventory.length && this.#o.renderApplied) {
      const objects = await this.#o.renderApplied(source);
      const wanted = inventory.filter((e) => !found.has(identityKey(e)));
      if (objects) {
        const rendered = { spec: { changes: objects.map((content) => applyOf(content)) } };
        for (const [k, v] of appliedContents(wanted, [rendered as Pick<Transaction, 'spec'>], key).found)
          found.set(k, v);
      }
    }
    return { found, sealed };
  }

  /**
   * Opens the `sopsContent` of the Apply changes of `transactions` that target a wanted object:
   * each such change with its content decrypted (`encrypted` maps it back to its sopsContent). The
   * keys are read once per check, and only if there is one; an object is decrypted at most
   * MAX_DECRYPTS_PER_OBJECT times (each is an X25519 operation on the shared event loop). What
   * cannot be opened (no key, not a recipient) is left out, logged: not compared.
   */
  #opener(source: Source) {
    let identities: Promise<readonly string[]> | undefined;
    const tries = new Map<string, number>();
    let failed = 0;
    const log = this.#o.log;
    const ageKeys = this.#o.ageKeys;
    return {
      async open(
        transactions: readonly Transaction[],
        wanted: readonly { apiVersion: string; kind: string; namespace?: string; name: string }[],
      ): Promise<{ transactions: Pick<Transaction, 'spec'>[]; encrypted: Map<KubeObject, string> }> {
        const encrypted = new Map<KubeObject, string>();
        const keys = new Set(wanted.map((e) => identityKey(e)));
        if (!ageKeys) return { transactions: [...transactions], encrypted };
        const out: Pick<Transaction, 'spec'>[] = [];
        for (const txn of transactions) {
          const changes = [];
          for (const change of txn.spec.changes ?? []) {
            const k = identityKey(change.target);
            const tried = tries.get(k) ?? 0;
            if (
              change.type !== 'Apply' ||
              change.sopsContent === undefined ||
              !keys.has(k) ||
              tried >= MAX_DECRYPTS_PER_OBJECT
            ) {
              changes.push(change);
              continue;
            }
            tries.set(k, tried + 1);
            try {
              identities ??= ageKeys(source);
              const content = await decryptSops('sopsContent', change.sopsContent, await identities);
              const { sopsContent: _encrypted, ...rest } = change;
              changes.push({ ...rest, content });
              encrypted.set(content as unknown as KubeObject, change.sopsContent);
            } catch (error) {
              tries.set(k, MAX_DECRYPTS_PER_OBJECT);
              if (failed++ > 0) continue; // one line per check
              log.info(
                { source: keyOf(source), object: k, err: error },
                'drift: an object applied encrypted could not be decrypted; not compared',
              );
            }
          }
          out.push({ ...txn, spec: { ...txn.spec, changes } });
        }
        return { transactions: out, encrypted };
      },
    };
  }

  /** Removes the series of Sources no longer listed. */
  #forgetMetrics(sources: readonly Source[]): void {
    const listed = new Set(sources.map(keyOf));
    for (const key of this.#metricKeys) {
      if (listed.has(key)) continue;
      const [namespace = '', name = ''] = key.split('/');
      this.#o.setMetric?.(namespace, name, undefined);
      this.#metricKeys.delete(key);
    }
  }
}

/**
 * One object: missing, or the dry run of its render (the source's manager, not forced) compared
 * with it; undefined when they agree.
 */
async function compareOne(
  as: Objects,
  rendered: KubeObject,
  manager: string,
): Promise<Pick<DriftedObject, 'reason' | 'detail'> | undefined> {
  const ref = {
    apiVersion: rendered.apiVersion,
    kind: rendered.kind,
    namespace: rendered.metadata.namespace,
    name: rendered.metadata.name,
  };
  const live = await as.find(ref);
  if (!live) return { reason: 'missing', detail: 'not found' };
  try {
    const dryRun = await as.apply(dryRunObject(rendered, live), {
      dryRun: true,
      fieldManager: manager,
      force: false,
    });
    const paths = driftedPaths(dryRun, live, manager);
    return paths.length > 0 ? { reason: 'changed', detail: paths.join(', ') } : undefined;
  } catch (error) {
    if (isConflict(error) && error instanceof KubeApiError)
      return { reason: 'conflict', detail: error.serverMessage.slice(0, MAX_DETAIL) };
    if (isNotFound(error)) return { reason: 'missing', detail: 'deleted during the check' };
    throw error;
  }
}

function applyOf(content: KubeObject) {
  return { type: 'Apply', content: content as unknown as Record<string, unknown> };
}

/** Whether `fresh` still has the applied commit and inventory `checked` was compared against, and nothing in flight. */
function sameApplied(checked: Source, fresh: Source): boolean {
  const a = checked.status ?? {};
  const b = fresh.status ?? {};
  return (
    b.lastAttempted?.outcome !== 'InProgress' &&
    b.drift?.correction?.outcome !== 'InProgress' &&
    a.lastApplied?.revision === b.lastApplied?.revision &&
    JSON.stringify(a.inventory ?? []) === JSON.stringify(b.inventory ?? [])
  );
}

function keyOf(source: Pick<Source, 'metadata'>): string {
  return `${source.metadata.namespace}/${source.metadata.name}`;
}
