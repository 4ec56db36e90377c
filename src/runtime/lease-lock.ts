/**
 * A coordination.k8s.io/v1 Lease used as a leader-election lock (client-go's LeaseLock plus
 * tryAcquireOrRenew): single attempts to take, keep or release it, remembering what was observed
 * and when. Timing policy (retry, deadlines, terms) lives in leader-election.ts.
 */
import type { KubeClient } from '../kube/client.ts';
import { isConflict, isNotFound } from '../kube/errors.ts';
import type { Logger } from '../log/index.ts';
import {
  claim,
  heldByOther,
  isExpired,
  type LeaderRecord,
  type Lease,
  mayAcquire,
  type Observation,
  observe,
  recordOf,
  released,
  specOf,
} from './lease-record.ts';

export interface LeaseLockOptions {
  client: Pick<KubeClient, 'request'>;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  logger: Logger;
  /** Called when the observed holder changes ("" when released). */
  onNewHolder?: ((identity: string) => void) | undefined;
}

export class LeaseLock {
  readonly #opts: LeaseLockOptions;
  readonly #path: string;
  /** The lease as last read or written: its resourceVersion guards our next PUT. */
  #lease: Lease | undefined;
  #observation: Observation | undefined;

  constructor(opts: LeaseLockOptions) {
    this.#opts = opts;
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${opts.namespace}/leases/${opts.name}`;
  }

  /** The holder last observed ("" if free, undefined before the first read). */
  get holder(): string | undefined {
    return this.#observation?.record.holderIdentity;
  }

  /** Someone else holds the lease and, by our clock, it has not expired. */
  heldByOther(): boolean {
    return heldByOther(this.#observation, this.#opts.identity, performance.now());
  }

  /** One attempt: true if we hold the lease afterwards. Never throws. */
  async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = performance.now();
    const observed = this.#observation;
    // Fast path: we hold it, so PUT over the lease we last wrote without reading it first.
    if (observed?.record.holderIdentity === this.#opts.identity && !isExpired(observed, now)) {
      if (
        await this.#put(claim(observed.record, this.#opts.identity, this.#duration, Date.now()), now, signal)
      ) {
        return true;
      }
      if (signal.aborted) return false;
    }
    try {
      this.#lease = await this.#opts.client.request<Lease>({ method: 'GET', path: this.#path, signal });
    } catch (e) {
      return isNotFound(e) ? this.#create(now, signal) : this.#failed(e, 'read');
    }
    this.#observe(recordOf(this.#lease), now);
    const current = this.#observation!;
    if (!mayAcquire(current, this.#opts.identity, now)) return false;
    return this.#put(claim(current.record, this.#opts.identity, this.#duration, Date.now()), now, signal);
  }

  /** Gives the lease up if we hold it, so a standby need not wait for it to expire. Never throws. */
  async release(signal: AbortSignal): Promise<boolean> {
    const observed = this.#observation;
    if (observed?.record.holderIdentity !== this.#opts.identity) return false;
    return this.#put(released(observed.record, Date.now()), performance.now(), signal);
  }

  get #duration(): number {
    return this.#opts.leaseDurationSeconds;
  }

  async #create(now: number, signal: AbortSignal): Promise<boolean> {
    const { namespace, name, identity } = this.#opts;
    const record = claim(undefined, identity, this.#duration, Date.now());
    try {
      this.#lease = await this.#opts.client.request<Lease>({
        method: 'POST',
        path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: specOf(record),
        },
        signal,
      });
    } catch (e) {
      return this.#failed(e, 'create');
    }
    this.#observe(record, now);
    return true;
  }

  /** PUTs `record`, conditional on the resourceVersion we last saw. */
  async #put(record: LeaderRecord, now: number, signal: AbortSignal): Promise<boolean> {
    const lease = this.#lease;
    if (!lease) return false;
    try {
      this.#lease = await this.#opts.client.request<Lease>({
        method: 'PUT',
        path: this.#path,
        body: { ...lease, spec: { ...lease.spec, ...specOf(record) } },
        signal,
      });
    } catch (e) {
      return this.#failed(e, 'update');
    }
    this.#observe(record, now);
    return true;
  }

  #observe(record: LeaderRecord, now: number): void {
    const previousHolder = this.#observation?.record.holderIdentity;
    this.#observation = observe(this.#observation, record, now);
    if (record.holderIdentity === previousHolder) return;
    this.#opts.logger.info({ leader: record.holderIdentity }, 'observed a new leader');
    try {
      this.#opts.onNewHolder?.(record.holderIdentity);
    } catch (e) {
      this.#opts.logger.error({ err: e }, 'onNewLeader failed');
    }
  }

  #failed(e: unknown, verb: string): false {
    // A conflict is the ordinary outcome of a lost race; anything else deserves a warning.
    if (isConflict(e)) this.#opts.logger.debug({ err: e }, `lease ${verb} lost a race`);
    else this.#opts.logger.warn({ err: e }, `lease ${verb} failed`);
    return false;
  }
}
