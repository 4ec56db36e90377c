/**
 * The sources of the watched branch, once per poll, after the materializer's (docs/sources.md,
 * "What a commit does"): the declarations read at the commit the poll reached, the Source objects
 * kept in step with them, and for each source one step of decideSource: wait for its transaction,
 * write its outcome, or render the commit and act on the render (a transaction, a record of a
 * failed or refused render, a status that moves to the commit).
 *
 * Crash safety: everything is derived again from Git, the Sources' status and the Transactions, so
 * a poll that fails half-way is simply run again. A transaction's name is its commit's, and the
 * status names it before it is created: a restart finds it (and waits for it), or finds that it
 * never was (and creates it then); never two for one source at once.
 */
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  type InventoryEntry,
  type Source,
  type SourceStatus,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { GitRepository } from '../git/repository.ts';
import { type RepositoryPolicy, rejectionNamespace } from '../gitops/policy.ts';
import { hasValidStamp } from '../gitops/provenance.ts';
import type { SourcePoll, SourceStep, SourceStepContext } from '../gitops/source-step.ts';
import { commitReader } from '../gitops/tree-reader.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import { checkoutCommit } from '../render/checkout.ts';
import type { Renderer } from '../render/renderer.ts';
import { type ResultContext, sourceCommit } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { summaryCondition } from '../saga/status.ts';
import { formatDiagnostic } from '../yaml/diagnostic.ts';
import { changesForRender, type RenderPlan } from './changes-for-render.ts';
import { type Declarations, readDeclarations, type SourceDeclaration } from './declaration.ts';
import {
  correctionChanges,
  correctionName,
  type DriftedObject,
  decideCorrection,
  driftIntervalMs,
  endedCorrection,
  startedCorrection,
} from './drift-decision.ts';
import { DriftMonitor, type DriftNotice, type DriftSettings } from './drift-monitor.ts';
import { inventoryDigestKey } from './inventory.ts';
import { inventoryFromTransaction } from './inventory-recovery.ts';
import type { KindToLookUp, Scope } from './object-policy.ts';
import { renderSource, type SourceRender } from './render-source.ts';
import { sealChanges } from './sealed-objects.ts';
import { desiredSource, isCurrent, madeBy, type SourceApi } from './source-api.ts';
import { type Attempt, decideRender, decideSource } from './source-decision.ts';
import { sourceDecryption } from './source-keys.ts';
import {
  type Refusal,
  renderDeclarationRejection,
  renderDiagnostic,
  renderRefusal,
  renderRenderFailure,
  renderSuperseded,
  type SourceCommitRef,
} from './source-records.ts';
import { attemptStatus, refusedStatus, settledStatus, unchangedStatus } from './source-status.ts';
import { MAX_TRANSACTION_BYTES, sourceTransaction, transactionNames } from './source-transaction.ts';
import { supersededCommits } from './superseded.ts';

export interface SourceSyncOptions extends Omit<SourceStepContext, 'objects'> {
  repository: GitRepository;
  branch: string;
  /** The folder of source declarations (--sources-root). */
  root: string;
  policy: RepositoryPolicy;
  api: SourceApi;
  renderer: Renderer;
  lookupScopes(kinds: readonly KindToLookUp[]): Promise<ReadonlyMap<string, Scope>>;
  /**
   * The age identities of `namespace`'s SOPS files, read as its ServiceAccount `serviceAccount`
   * (src/changes/age-keys.ts); AgeKeysError when they cannot be.
   */
  ageKeys(namespace: string, serviceAccount: string): Promise<string[]>;
  context: ResultContext;
  now?: () => Date;
  /** Drift checks (docs/sources.md, "Drift"); undefined: none. */
  drift?: DriftSettings & {
    /** The controller identity: drift reads Sources and Transactions, and impersonates each source's ServiceAccount. */
    objects: Objects;
    onNews?(notice: DriftNotice): void;
    setMetric?(namespace: string, source: string, count: number | undefined): void;
  };
}

interface Poll {
  at: string;
  stampKey: string;
  digestKey: Buffer;
  summary: SourcePoll;
}

export class SourceSync implements SourceStep {
  readonly #o: SourceSyncOptions;
  readonly #now: () => Date;
  /** Each Source's status as last read or written, by "<namespace>/<name>" (for isSettled). */
  readonly #statuses = new Map<string, SourceStatus | undefined>();
  #polled = false;
  /** The inventory each transaction this process created leaves once committed, by its uid. */
  readonly #plans = new Map<string, InventoryEntry[]>();
  /** The commit each source was last rendered at without its status moving (the same render). */
  readonly #renderedAt = new Map<string, string>();
  /** What each invalid declaration's last record said, by file: recorded once, not at every commit. */
  readonly #rejected = new Map<string, string>();
  /** One sequence reservation at a time: each saves the cursor. */
  #reserving: Promise<unknown> = Promise.resolve();
  /** Per source, the step or drift write in progress: never two writers of one Source at once. */
  readonly #locks = new Map<string, Promise<unknown>>();
  /** A Source as drift last wrote it, newer than the poll's list, until the source's next step. */
  readonly #driftWritten = new Map<string, Source>();
  readonly #drift: DriftMonitor | undefined;

  constructor(options: SourceSyncOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    const drift = options.drift;
    this.#drift =
      drift &&
      new DriftMonitor({
        ...drift,
        api: options.api,
        digestKey: async () => inventoryDigestKey(await options.cursor.stampKey()),
        withSource: (key, write) => this.#locked(key, write),
        renderApplied: (source) => this.#renderApplied(source),
        ageKeys: (source) => options.ageKeys(source.metadata.namespace ?? '', source.spec.serviceAccountName),
        correct: (source, drifted, contents, sealed) => this.#correctDrift(source, drifted, contents, sealed),
        onWritten: (source) => {
          this.#remember(source);
          this.#driftWritten.set(keyOf(source), source);
        },
        log: options.log.child({ component: 'drift' }),
        ...(options.now && { now: options.now }),
      });
  }

  /** Runs `work` once the source's step or drift write in progress (if any) has ended. */
  #locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#locks.get(key) ?? Promise.resolve();
    const run = before.then(work, work);
    const held = run.catch(() => undefined);
    this.#locks.set(key, held);
    void held.then(() => {
      if (this.#locks.get(key) === held) this.#locks.delete(key);
    });
    return run;
  }

  /**
   * Whether the outcome of `txn`, a source's transaction, is in its Source's status (retention
   * waits for it); true for any other Transaction and for a source that is gone.
   */
  isSettled(txn: Transaction): boolean {
    const source = txn.spec.sourceRef?.name;
    if (source === undefined) return true;
    if (!this.#polled) return false;
    const key = `${txn.metadata.namespace}/${source}`;
    if (!this.#statuses.has(key)) return true;
    const status = this.#statuses.get(key);
    const last = status?.lastAttempted;
    const correction = status?.drift?.correction;
    if (correction?.transaction === txn.metadata.name && correction.outcome === 'InProgress') return false;
    return !(last?.transaction === txn.metadata.name && last.outcome === 'InProgress');
  }

  /** Whether a Source waits for `txn` to end: its end is worth a poll at once. */
  awaits(txn: Transaction): boolean {
    return !this.isSettled(txn);
  }

  stop(): void {
    this.#o.renderer.stop();
    void this.#drift?.stop();
  }

  /** One step for every source at `at`, the commit the poll reached. */
  async poll(at: string): Promise<SourcePoll> {
    const stampKey = await this.#o.cursor.stampKey();
    const poll: Poll = {
      at,
      stampKey,
      digestKey: inventoryDigestKey(stampKey),
      summary: {
        sources: 0,
        transactions: 0,
        waiting: 0,
        renderFailed: 0,
        refused: 0,
        rejected: 0,
        deleted: 0,
      },
    };
    const declarations = await this.#o.repository.run((session) =>
      readDeclarations(commitReader(session.store, at), this.#o.root, this.#o.policy),
    );
    if (declarations.problems.length > 0) {
      this.#o.log.warn(
        { problems: declarations.problems.map(formatDiagnostic) },
        'the sources folder is refused: no source is read or changed until it is fixed',
      );
      return poll.summary;
    }
    const listed = new Map((await this.#o.api.list()).map((s) => [keyOf(s), s]));
    poll.summary.sources = declarations.sources.length;
    const failures: unknown[] = [];
    const settle = async (work: Promise<void>, what: Record<string, string>) => {
      try {
        await work;
      } catch (error) {
        failures.push(error);
        this.#o.log.warn({ ...what, err: error }, 'source step failed; retried at the next poll');
      }
    };
    await Promise.all([
      ...declarations.sources.map((d) =>
        settle(this.#lockedSource(d, listed.get(`${d.namespace}/${d.name}`), poll), {
          source: `${d.namespace}/${d.name}`,
        }),
      ),
      ...declarations.rejected.map((r) => settle(this.#rejectDeclaration(r, listed, poll), { file: r.file })),
    ]);
    await settle(this.#deleteGone(declarations, listed, poll), { step: 'delete' });
    for (const d of declarations.sources) this.#rejected.delete(d.file);
    this.#polled = true;
    this.#drift?.start();
    if (failures.length > 0) throw failures[0];
    return poll.summary;
  }

  /** One step of a source, never beside a drift write of its status. */
  #lockedSource(d: SourceDeclaration, listed: Source | undefined, poll: Poll): Promise<void> {
    const key = `${d.namespace}/${d.name}`;
    return this.#locked(key, () => {
      // Drift wrote the status after the poll listed it: that write is the newer Source.
      const found = this.#driftWritten.get(key) ?? listed;
      this.#driftWritten.delete(key);
      return this.#source(d, found, poll);
    });
  }

  async #source(d: SourceDeclaration, found: Source | undefined, poll: Poll): Promise<void> {
    const key = `${d.namespace}/${d.name}`;
    let source = await this.#ensureSource(d, found, poll);
    if (!source) return;
    const correcting = await this.#settleCorrection(source, poll);
    if (correcting === 'wait') {
      poll.summary.waiting++;
      return;
    }
    source = correcting;
    for (let round = 0; round < 2; round++) {
      const attempt = await this.#attempt(source, poll);
      const step = decideSource({
        status: source.status,
        at: poll.at,
        attempt: attempt.attempt,
        renderedAt: this.#renderedAt.get(key),
      });
      switch (step.do) {
        case 'nothing':
          return;
        case 'wait':
          poll.summary.waiting++;
          return;
        case 'settle':
          source = await this.#settle(source, attempt.txn as Transaction, step.outcome, poll);
          continue;
        case 'render':
          await this.#render(d, source, poll, step.void);
          return;
      }
    }
  }

  /** The Source as the declaration makes it: created, replaced when the file changed; undefined when refused. */
  async #ensureSource(
    d: SourceDeclaration,
    found: Source | undefined,
    poll: Poll,
  ): Promise<Source | undefined> {
    const desired = desiredSource(d, this.#o.api.origin, poll.at);
    if (found && isCurrent(found, desired)) return this.#remember(found);
    const written = found ? await this.#o.api.replace(found, desired) : await this.#o.api.create(desired);
    if (written.kind === 'written') {
      this.#o.log.info(
        { source: keyOf(written.source), file: d.file },
        found ? 'Source updated' : 'Source created',
      );
      return this.#remember(written.source);
    }
    await this.#rejectDeclaration(
      {
        file: d.file,
        name: d.name,
        namespace: d.namespace,
        diagnostics: [{ code: 'invalid-value', file: d.file, message: written.message }],
      },
      new Map(),
      poll,
    );
    return undefined;
  }

  #remember(source: Source): Source {
    this.#statuses.set(keyOf(source), source.status);
    return source;
  }

  async #writeStatus(source: Source, status: SourceStatus): Promise<Source> {
    return this.#remember(await this.#o.api.writeStatus(source, status));
  }

  /**
   * A drift correction in flight (docs/sources.md, "Drift"): 'wait' while its Transaction runs (the
   * source's transactions never overlap); once it ended, or was never created, its outcome written,
   * with the backoff before the next correction when it rolled back or failed.
   */
  async #settleCorrection(source: Source, poll: Poll): Promise<Source | 'wait'> {
    const correction = source.status?.drift?.correction;
    if (correction?.outcome !== 'InProgress' || !correction.transaction) return source;
    const namespace = source.metadata.namespace ?? '';
    const txn =
      this.#o.cachedTransaction(namespace, correction.transaction) ??
      (await this.#o.api.findTransaction(namespace, correction.transaction));
    const ours =
      txn && txn.spec.sourceRef?.name === source.metadata.name && hasValidStamp(txn, poll.stampKey);
    const step = decideCorrection(source.status, ours ? txn.status?.phase : 'absent');
    if (step.do === 'wait') return 'wait';
    if (step.do === 'none') return source;
    const written = await this.#writeStatus(
      source,
      endedCorrection(
        source.status ?? {},
        step.outcome,
        (ours && txn.status?.completedAt) || this.#now().toISOString(),
        this.#driftIntervalMs(source),
      ),
    );
    const ended = written.status?.drift?.correction;
    this.#o.log.info(
      {
        source: keyOf(source),
        transaction: correction.transaction,
        outcome: step.outcome,
        ...(ended?.retryAfter && { failures: ended.failures, retryAfter: ended.retryAfter }),
      },
      'drift correction ended; status written',
    );
    this.#drift?.nudge(); // checked again at once: corrected, or still drifted
    return written;
  }

  /**
   * Corrects drift (drift.correct): one Transaction `<source>-drift-<sequence>` of the drifted
   * objects' last applied renders, applied by the source's manager and gated by its health settings
   * like a commit's. Called by the drift monitor under this source's lock, with no transaction of
   * the source in flight; the status names it before it is created (crash safety, as a commit's).
   */
  async #correctDrift(
    source: Source,
    drifted: readonly DriftedObject[],
    contents: ReadonlyMap<string, KubeObject>,
    sealed: ReadonlyMap<string, string>,
  ): Promise<void> {
    const status = source.status ?? {};
    const revision = status.lastApplied?.revision;
    const file = source.metadata.annotations?.[ANNOTATION_SOURCE_PATH];
    const changes = correctionChanges(status.inventory ?? [], drifted, contents, sealed);
    if (!revision || !file || changes.length === 0) return;
    const namespace = source.metadata.namespace ?? '';
    const { sequence, stampKey } = await this.#reserveSequence();
    const name = correctionName(source.metadata.name, sequence);
    const txn = sourceTransaction({
      source: { name: source.metadata.name, namespace, spec: source.spec },
      name,
      file,
      repository: this.#o.repository.display,
      branch: this.#o.branch,
      commit: revision,
      sequence,
      changes,
      renderDigest: status.lastAttempted?.renderDigest ?? '',
      left: [],
      stampKey,
    });
    const log = this.#o.log.child({ source: keyOf(source), transaction: name });
    if (Buffer.byteLength(JSON.stringify(txn)) > MAX_TRANSACTION_BYTES) {
      log.warn(
        { changes: changes.length },
        'drift not corrected: its Transaction would not fit one API object',
      );
      return;
    }
    const correction = { transaction: name, objects: changes.length, time: this.#now().toISOString() };
    // Written under drift's lock: the newest Source for the source's next step, as drift's own writes.
    const named = await this.#writeStatus(source, startedCorrection(status, correction));
    this.#driftWritten.set(keyOf(named), named);
    const created = await this.#o.transactions.create(txn, stampKey);
    if (created.kind === 'refused') {
      const failed = await this.#writeStatus(
        named,
        endedCorrection(
          named.status ?? {},
          'Failed',
          this.#now().toISOString(),
          this.#driftIntervalMs(named),
        ),
      );
      this.#driftWritten.set(keyOf(failed), failed);
      log.warn({ reason: created.message }, 'drift correction refused');
      return;
    }
    await this.#o.recordMaterialized(created.transaction);
    log.info({ changes: changes.length, sequence }, 'drift correction created');
  }

  /** The source's drift interval (the test-only override too): the unit of a correction's backoff. */
  #driftIntervalMs(source: Source): number {
    return driftIntervalMs(source, this.#o.drift?.intervalOverrideMs);
  }

  /** The transaction the status names, if the status waits for one. */
  async #attempt(source: Source, poll: Poll): Promise<{ attempt: Attempt; txn?: Transaction }> {
    const last = source.status?.lastAttempted;
    if (last?.outcome !== 'InProgress' || !last.transaction || !last.revision)
      return { attempt: { state: 'none' } };
    const namespace = source.metadata.namespace ?? '';
    const txn =
      this.#o.cachedTransaction(namespace, last.transaction) ??
      (await this.#o.api.findTransaction(namespace, last.transaction));
    if (!txn || !this.#ours(txn, source.metadata.name, last.revision, poll))
      return { attempt: { state: 'absent' } };
    return {
      attempt: {
        state: 'found',
        phase: txn.status?.phase,
        message: summaryCondition(txn.status?.conditions ?? [])?.message,
        completedAt: txn.status?.completedAt,
      },
      txn,
    };
  }

  /** Whether `txn` is this source's transaction of `commit`, created by Janus from this repository. */
  #ours(txn: Transaction, source: string, commit: string, poll: Poll): boolean {
    const annotations = txn.metadata.annotations ?? {};
    return (
      txn.spec.sourceRef?.name === source &&
      annotations[ANNOTATION_SOURCE_REPOSITORY] === this.#o.repository.display &&
      sourceCommit(annotations[ANNOTATION_SOURCE_REVISION]) === commit &&
      hasValidStamp(txn, poll.stampKey)
    );
  }

  /** Writes the outcome of the transaction the status names (docs/sources.md, "Outcome"). */
  async #settle(
    source: Source,
    txn: Transaction,
    outcome: 'Committed' | 'RolledBack' | 'Failed',
    poll: Poll,
  ): Promise<Source> {
    const uid = txn.metadata.uid ?? '';
    let inventory: InventoryEntry[] | undefined;
    if (outcome === 'Committed') {
      inventory = this.#plans.get(uid);
      if (!inventory) {
        // Not created by this process: read from the Transaction (the cache keeps no contents).
        const full = await this.#o.api.findTransaction(source.metadata.namespace ?? '', txn.metadata.name);
        inventory = inventoryFromTransaction(source.status?.inventory ?? [], full ?? txn, poll.digestKey);
      }
    }
    const status = settledStatus(
      source.status ?? {},
      {
        phase: outcome,
        message: summaryCondition(txn.status?.conditions ?? [])?.message,
        time: txn.status?.completedAt,
      },
      inventory,
      this.#now(),
      source.metadata.generation,
    );
    const written = await this.#writeStatus(source, status);
    this.#plans.delete(uid);
    this.#drift?.nudge(); // a commit applied: its objects are checked at once
    this.#o.log.info(
      { source: keyOf(source), transaction: txn.metadata.name, outcome },
      'source transaction ended; status written',
    );
    return written;
  }

  async #render(d: SourceDeclaration, source: Source, poll: Poll, voided: boolean): Promise<void> {
    const at = poll.at;
    const rendered = await renderSource(
      d,
      () => this.#o.repository.run((session) => checkoutCommit(session.store, at)),
      {
        renderer: this.#o.renderer,
        policy: this.#o.policy,
        lookupScopes: (kinds) => this.#o.lookupScopes(kinds),
        digestKey: poll.digestKey,
        // The keys as the source's ServiceAccount reads them.
        decryption: sourceDecryption(() => this.#o.ageKeys(d.namespace, d.spec.serviceAccountName)),
      },
    );
    const status = source.status ?? {};
    const ref = this.#ref(d, at, transactionNames(d.name, at)[0] as string);
    const log = this.#o.log.child({ source: keyOf(source), commit: at });
    if (rendered.kind === 'failed') {
      await this.#recordSuperseded(d, source, at, voided);
      await this.#record(renderRenderFailure(ref, rendered.failure, this.#o.context));
      const reason = formatDiagnostic(renderDiagnostic(rendered.failure, d.file));
      await this.#writeStatus(
        source,
        refusedStatus(
          status,
          { revision: at, transaction: ref.name },
          'RenderFailed',
          reason,
          this.#now(),
          generation(source),
        ),
      );
      poll.summary.renderFailed++;
      log.info({ failure: rendered.failure }, 'source render failed; recorded');
      return;
    }
    if (rendered.kind === 'refused') {
      await this.#recordSuperseded(d, source, at, voided);
      await this.#refuse(source, ref, rendered.refusals, rendered.more, poll);
      return;
    }
    const plan = changesForRender({
      objects: rendered.objects,
      inventory: status.inventory ?? [],
      prune: d.spec.prune ?? false,
      digestKey: poll.digestKey,
    });
    const step = decideRender(source.status, rendered.digest, plan, voided);
    switch (step.do) {
      case 'same':
        this.#renderedAt.set(keyOf(source), at);
        log.debug('the same render as the last attempt: not tried again');
        return;
      case 'refuse':
        await this.#recordSuperseded(d, source, at, voided);
        await this.#refuse(source, ref, [{ message: step.message }], 0, poll);
        return;
      case 'unchanged': {
        await this.#recordSuperseded(d, source, at, voided);
        const next = plan.kind === 'refused' ? [] : plan.next;
        await this.#writeStatus(
          source,
          unchangedStatus(
            status,
            { revision: at, renderDigest: rendered.digest },
            next,
            this.#now(),
            generation(source),
          ),
        );
        log.info('the cluster already holds the render: no transaction');
        return;
      }
      case 'transaction':
        if (plan.kind !== 'changes') return;
        await this.#recordSuperseded(d, source, at, voided);
        await this.#createTransaction(d, source, rendered, plan, poll);
        return;
    }
  }

  async #refuse(
    source: Source,
    ref: SourceCommitRef,
    refusals: readonly Refusal[],
    more: number,
    poll: Poll,
  ): Promise<void> {
    await this.#record(renderRefusal(ref, refusals, more, this.#o.context));
    const count = refusals.length + more;
    const reason = `${refusals[0]?.message ?? 'refused'}${count > 1 ? ` (and ${count - 1} more)` : ''}`;
    await this.#writeStatus(
      source,
      refusedStatus(
        source.status ?? {},
        { revision: ref.commit, transaction: ref.name },
        'Refused',
        reason,
        this.#now(),
        generation(source),
      ),
    );
    poll.summary.refused++;
    this.#o.log.info({ source: keyOf(source), commit: poll.at, reason }, 'source render refused; recorded');
  }

  async #createTransaction(
    d: SourceDeclaration,
    source: Source,
    rendered: Extract<SourceRender, { kind: 'rendered' }>,
    plan: Extract<RenderPlan, { kind: 'changes' }>,
    poll: Poll,
  ): Promise<void> {
    const at = poll.at;
    const namespace = d.namespace;
    const changes = await sealChanges(plan.changes, rendered.sealed);
    const { sequence, stampKey } = await this.#reserveSequence();
    let current = source;
    for (const name of transactionNames(d.name, at)) {
      const existing = this.#o.cachedTransaction(namespace, name);
      if (existing && !this.#ours(existing, d.name, at, poll)) continue; // another commit's (the same hex), or not ours
      const txn = sourceTransaction({
        source: d,
        name,
        file: d.file,
        repository: this.#o.repository.display,
        branch: this.#o.branch,
        commit: at,
        sequence,
        changes,
        renderDigest: rendered.digest,
        left: plan.left,
        stampKey,
      });
      const bytes = Buffer.byteLength(JSON.stringify(txn));
      const ref = this.#ref(d, at, name);
      if (bytes > MAX_TRANSACTION_BYTES) {
        const message = `its Transaction would be ${bytes} bytes, more than the ${MAX_TRANSACTION_BYTES} one API object may take: split the source, or its commit (${plan.changes.length} changes)`;
        await this.#refuse(current, ref, [{ message }], 0, poll);
        return;
      }
      // The status names the transaction before it exists: a restart finds it, or finds it never was.
      current = await this.#writeStatus(
        current,
        attemptStatus(
          current.status ?? {},
          { revision: at, transaction: name, renderDigest: rendered.digest },
          this.#now(),
          generation(current),
        ),
      );
      const created = await this.#o.transactions.create(txn, stampKey);
      if (created.kind === 'refused') {
        if (created.field === 'metadata.name') continue; // a namesake someone else made: the next name
        await this.#refuse(current, ref, [{ message: created.message }], 0, poll);
        return;
      }
      if (!this.#ours(created.transaction, d.name, at, poll)) continue;
      this.#plans.set(created.transaction.metadata.uid ?? '', plan.next);
      await this.#o.recordMaterialized(created.transaction);
      poll.summary.transactions++;
      this.#o.log.info(
        {
          source: keyOf(source),
          commit: at,
          transaction: name,
          sequence,
          changes: plan.changes.length,
          existed: created.kind === 'exists',
        },
        'source transaction created',
      );
      return;
    }
    throw new Error(`no free Transaction name for source ${namespace}/${d.name} at ${at}`);
  }

  /**
   * The objects of `source`'s render at its last applied commit, for drift, when the Transactions
   * that applied them are gone (retention): its declaration read and rendered at that commit.
   */
  async #renderApplied(source: Source): Promise<KubeObject[] | undefined> {
    const at = source.status?.lastApplied?.revision;
    if (!at) return undefined;
    const declarations = await this.#o.repository.run((session) =>
      readDeclarations(commitReader(session.store, at), this.#o.root, this.#o.policy),
    );
    const d = declarations.sources.find(
      (s) => s.namespace === source.metadata.namespace && s.name === source.metadata.name,
    );
    if (!d) return undefined;
    const rendered = await renderSource(
      d,
      () => this.#o.repository.run((session) => checkoutCommit(session.store, at)),
      {
        renderer: this.#o.renderer,
        policy: this.#o.policy,
        lookupScopes: (kinds) => this.#o.lookupScopes(kinds),
        digestKey: inventoryDigestKey(await this.#o.cursor.stampKey()),
      },
    );
    return rendered.kind === 'rendered' ? rendered.objects : undefined;
  }

  /**
   * Records the commits since the last attempted one that this attempt leaves unapplied; with
   * `voided`, the last attempted one too (its transaction never began).
   */
  async #recordSuperseded(d: SourceDeclaration, source: Source, at: string, voided: boolean): Promise<void> {
    const from = source.status?.lastAttempted?.revision;
    if (!from || from === at) return;
    const skipped = await this.#o.repository.run((session) =>
      supersededCommits(session.store, from, at, [d.spec.path, d.file]),
    );
    if (voided) skipped.commits.push(from);
    for (const commit of skipped.commits) {
      const name = transactionNames(d.name, commit)[0] as string;
      await this.#record(renderSuperseded(this.#ref(d, commit, name), at, this.#o.context));
    }
    if (skipped.commits.length > 0)
      this.#o.log.info(
        {
          source: `${d.namespace}/${d.name}`,
          superseded: skipped.commits.length,
          more: skipped.more,
          by: at,
        },
        'commits superseded',
      );
  }

  /** A declaration with problems: its rejection recorded once, and its Source's status told. */
  async #rejectDeclaration(
    r: {
      file: string;
      name: string;
      namespace: string;
      diagnostics: Parameters<typeof renderDeclarationRejection>[1];
    },
    listed: ReadonlyMap<string, Source>,
    poll: Poll,
  ): Promise<void> {
    const said = JSON.stringify(r.diagnostics);
    if (this.#rejected.get(r.file) === said) return;
    const { namespace, refused } = rejectionNamespace(this.#o.policy, r.namespace);
    const name = transactionNames(r.name, poll.at)[0] as string;
    const ref: SourceCommitRef = { ...this.#ref({ name: r.name, namespace, file: r.file }, poll.at, name) };
    await this.#record(renderDeclarationRejection(ref, r.diagnostics, this.#o.context, refused));
    this.#rejected.set(r.file, said);
    poll.summary.rejected++;
    const listedSource = refused === undefined ? listed.get(`${r.namespace}/${r.name}`) : undefined;
    // Its transaction in flight still ends in its status; the rejection is said once it has.
    const existing = listedSource && (await this.#settleOnly(listedSource, poll));
    const first = r.diagnostics[0];
    if (existing && first && existing.status?.lastAttempted?.outcome !== 'InProgress') {
      const more = r.diagnostics.length > 1 ? ` (and ${r.diagnostics.length - 1} more)` : '';
      const reason = `the declaration is invalid: ${formatDiagnostic(first)}${more}`;
      await this.#writeStatus(
        existing,
        refusedStatus(
          existing.status ?? {},
          { revision: poll.at, transaction: name },
          'Refused',
          reason,
          this.#now(),
          generation(existing),
        ),
      );
    }
    this.#o.log.info({ file: r.file, errors: r.diagnostics.length }, 'source declaration rejected');
  }

  /** The outcome of the Source's transaction written if it ended; the Source as it now is. */
  async #settleOnly(source: Source, poll: Poll): Promise<Source> {
    const attempt = await this.#attempt(source, poll);
    const step = decideSource({ status: source.status, at: poll.at, attempt: attempt.attempt });
    if (step.do !== 'settle' || !attempt.txn) return this.#remember(source);
    return this.#settle(source, attempt.txn, step.outcome, poll);
  }

  /** Deletes the Sources this repository made whose file is gone; what they applied stays. */
  async #deleteGone(
    declarations: Declarations,
    listed: ReadonlyMap<string, Source>,
    poll: Poll,
  ): Promise<void> {
    const declared = new Set(declarations.sources.map((d) => `${d.namespace}/${d.name}`));
    const validFiles = new Set(declarations.sources.map((d) => d.file));
    const present = new Set([...validFiles, ...declarations.rejected.map((r) => r.file)]);
    for (const [key, source] of listed) {
      if (declared.has(key) || !madeBy(source, this.#o.api.origin)) continue;
      const file = source.metadata.annotations?.[ANNOTATION_SOURCE_PATH] ?? '';
      // An invalid file keeps its Source (as it was); a file now declaring another Source does not.
      if (present.has(file) && !validFiles.has(file)) continue;
      await this.#o.api.delete(source);
      this.#statuses.delete(key);
      poll.summary.deleted++;
      this.#o.log.info(
        { source: key, file },
        'Source deleted: its file is gone (the objects it applied stay)',
      );
    }
  }

  #reserveSequence(): Promise<{ sequence: number; stampKey: string }> {
    const next = this.#reserving.then(
      () => this.#o.cursor.reserveSequence(),
      () => this.#o.cursor.reserveSequence(),
    );
    this.#reserving = next.catch(() => undefined);
    return next;
  }

  #ref(
    d: Pick<SourceDeclaration, 'name' | 'namespace' | 'file'>,
    commit: string,
    name: string,
  ): SourceCommitRef {
    return {
      namespace: d.namespace,
      source: d.name,
      name,
      file: d.file,
      repository: this.#o.repository.display,
      branch: this.#o.branch,
      commit,
    };
  }

  /** A record of the poll: durable once queued (the status that says it was made is written next). */
  #record(record: ResultRecord): Promise<void> {
    return this.#o.results.write(record, { rederivable: false });
  }
}

function keyOf(source: Pick<Source, 'metadata'>): string {
  return `${source.metadata.namespace}/${source.metadata.name}`;
}

function generation(source: Source): number | undefined {
  return source.metadata.generation;
}
