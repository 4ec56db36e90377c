/**
 * The leader's end of the Git-side control object (git-control.ts): it makes sure the object
 * exists, watches it (one object, by name), tells the poller when someone asks for a poll, answers
 * whether the Git side is suspended, and records what a requested poll saw.
 *
 * Cost: one watch, and one PATCH per answered request or new tip of the watched branch.
 */
import type { KubeClient } from '../kube/client.ts';
import { PatchType } from '../kube/client.ts';
import { isAlreadyExists, isNotFound } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import { describeError, type Logger } from '../log/index.ts';
import { Informer } from '../runtime/informer.ts';
import { dropManagedFields } from '../runtime/watch-stream.ts';
import {
  describeSuspension,
  gitControlConfigMapName,
  pollRequestOf,
  type RecordedPoll,
  recordedPollOf,
  recordPollData,
  renderGitControl,
  type Suspension,
  suspensionOf,
} from './git-control.ts';
import type { WatchedSource } from './state.ts';

export interface GitControlWatchOptions {
  client: KubeClient;
  objects: Objects;
  namespace: string;
  source: WatchedSource;
  log: Logger;
  /** Someone asked for a poll now. */
  onPollRequested(): void;
  /** The Git side was suspended (a Suspension) or resumed (undefined). */
  onSuspensionChanged?(suspension: Suspension | undefined): void;
  now?: () => Date;
}

export class GitControlWatch {
  readonly name: string;
  readonly #o: GitControlWatchOptions;
  readonly #informer: Informer;
  readonly #now: () => Date;
  #object: KubeObject | undefined;
  /** The last request a recorded poll answered. */
  #answered: string | undefined;
  /** The last request handed to the poller. */
  #triggered: string | undefined;
  #recordedCommit: string | undefined;
  #suspended = false;

  constructor(options: GitControlWatchOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.name = gitControlConfigMapName(options.source);
    const seen = (object: KubeObject) => this.#seen(object);
    this.#informer = new Informer({
      client: options.client,
      path: `/api/v1/namespaces/${options.namespace}/configmaps`,
      fieldSelector: `metadata.name=${this.name}`,
      transform: dropManagedFields,
      resyncPeriodMs: 0,
      logger: options.log,
      handlers: {
        onAdd: seen,
        onUpdate: (_old, object) => seen(object),
        onDelete: () => this.#seen(undefined),
      },
    });
  }

  /**
   * Creates the object if there is none, and resolves once its current state is known: the first
   * poll must not run before a suspension that outlived the last leader is seen.
   */
  async start(signal: AbortSignal): Promise<void> {
    const existing = await this.#objects.find({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: this.name,
      namespace: this.#o.namespace,
    });
    if (!existing) await this.#create();
    const recorded = recordedPollOf(existing);
    this.#answered = recorded?.request;
    this.#triggered = this.#answered;
    this.#recordedCommit = recorded?.commit;
    this.#informer.start();
    await Promise.race([
      this.#informer.waitForSync(),
      new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
    ]);
  }

  async stop(): Promise<void> {
    await this.#informer.stop();
  }

  suspension(): Suspension | undefined {
    return suspensionOf(this.#object);
  }

  /** The request the next poll answers, if one is waiting. */
  pendingRequest(): string | undefined {
    const request = pollRequestOf(this.#object);
    return request !== this.#answered ? request : undefined;
  }

  /**
   * Records a poll when it answers a request or read a new tip; never throws (a failed record
   * is logged: the person waiting on it sees the timeout, the Git side goes on).
   */
  async record(request: string | undefined, poll: Omit<RecordedPoll, 'request' | 'at'>): Promise<void> {
    const answers = request !== undefined && request !== this.#answered;
    const newTip = poll.commit !== undefined && poll.commit !== this.#recordedCommit;
    if (!answers && !newTip) return;
    const record: RecordedPoll = {
      ...(answers ? { request } : this.#answered !== undefined && { request: this.#answered }),
      at: this.#now().toISOString(),
      ...poll,
    };
    try {
      await this.#patchData(recordPollData(record));
      if (answers) this.#answered = request;
      if (poll.commit !== undefined) this.#recordedCommit = poll.commit;
    } catch (error) {
      this.#o.log.warn(
        { err: error, configMap: `${this.#o.namespace}/${this.name}` },
        'cannot record the poll on the Git-side control ConfigMap',
      );
    }
  }

  get #objects(): Objects {
    return this.#o.objects;
  }

  #seen(object: KubeObject | undefined): void {
    this.#object = object;
    const suspension = suspensionOf(object);
    if ((suspension !== undefined) !== this.#suspended) {
      this.#suspended = suspension !== undefined;
      if (suspension) this.#o.log.info({ suspension }, `Git side ${describeSuspension(suspension)}`);
      else this.#o.log.info('Git side resumed');
      this.#o.onSuspensionChanged?.(suspension);
    }
    const request = pollRequestOf(object);
    if (request !== undefined && request !== this.#answered && request !== this.#triggered) {
      this.#triggered = request;
      this.#o.onPollRequested();
    }
  }

  async #create(): Promise<void> {
    try {
      await this.#objects.create(renderGitControl(this.#o.namespace, this.#o.source));
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }

  async #patchData(data: Record<string, string | null>): Promise<void> {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: this.name, namespace: this.#o.namespace };
    try {
      await this.#objects.patch(ref, { data }, PatchType.merge);
    } catch (error) {
      // Deleted by hand while we run: bring it back (its annotations went with it).
      if (!isNotFound(error)) throw error;
      this.#o.log.info({ err: describeError(error).message }, 'Git-side control ConfigMap re-created');
      await this.#create();
      await this.#objects.patch(ref, { data }, PatchType.merge);
    }
  }
}
