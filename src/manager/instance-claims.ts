/**
 * The installation's claim on its instance (src/controller/instance-claim.ts), held for as long
 * as the process runs: taken before anything else starts (a conflict is fatal, naming the other
 * installation), renewed every 20 s by every replica, and released when the process stops. A claim
 * found taken by another namespace, or a conflicting claim older than its own, ends the process
 * as a failed runnable does: two installations must never both drive the same Transactions.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { API_VERSION, CLAIM_KIND, CLAIM_PLURAL, GROUP, VERSION } from '../api/v1alpha1/index.ts';
import { transactionSelector } from '../controller/installation.ts';
import {
  CLAIM_RENEW_MS,
  claimedMessage,
  claimName,
  claimObject,
  conflictingClaims,
  type Installation,
  type InstanceClaim,
  InstanceClaimedError,
  isFresh,
  isLiveInstallation,
  yieldsTo,
} from '../controller/instance-claim.ts';
import type { KubeClient } from '../kube/client.ts';
import { isAlreadyExists, isConflict, isForbidden, isNotFound, isTransient } from '../kube/errors.ts';
import { Discovery, Objects } from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import { backoffDelay } from '../runtime/backoff.ts';
import { sleep } from '../runtime/sleep.ts';

/** A claim that cannot be made for a transient reason is tried again this many times, over about a minute. */
const ACQUIRE_ATTEMPTS = 8;
const ACQUIRE_BACKOFF = { baseMs: 500, capMs: 15_000, jitter: 0.2 };

const CLAIM_MAPPING = {
  group: GROUP,
  version: VERSION,
  kind: CLAIM_KIND,
  resource: CLAIM_PLURAL,
  namespaced: false,
} as const;

export class InstanceClaims {
  readonly #objects: Objects;
  readonly #me: Installation;
  readonly #holder: string;
  readonly #log: Logger;
  readonly #now: () => number;
  /** The claims of this instance as last listed. */
  #seen: InstanceClaim[] = [];
  /** When this process first held the claim: kept if it must write the claim anew. */
  #acquiredAt: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The renewal under way, if any: release() waits for it. */
  #renewing: Promise<void> | undefined;
  #stopped = false;

  private constructor(client: KubeClient, me: Installation, log: Logger, now: () => number) {
    const discovery = new Discovery(client);
    discovery.seed(CLAIM_MAPPING);
    this.#objects = new Objects(client, discovery);
    this.#me = me;
    this.#holder = `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.#log = log.child({ component: 'instance-claim' });
    this.#now = now;
  }

  /**
   * Claims the instance for this installation; throws InstanceClaimedError when another holds
   * it (or an overlapping scope of it), and an error saying what to install when the claims
   * cannot be read or written at all: without its claim an installation does not run.
   */
  static async acquire(opts: {
    client: KubeClient;
    installation: Installation;
    log: Logger;
    now?: () => number;
    /** The process is stopping: no further attempt (the last error is thrown). */
    signal?: AbortSignal;
  }): Promise<InstanceClaims> {
    const claims = new InstanceClaims(opts.client, opts.installation, opts.log, opts.now ?? Date.now);
    // A server still starting (a CRD just created answers 429 a moment) is waited for, a while.
    for (let attempt = 0; ; attempt++) {
      try {
        await claims.#refuseConflicts();
        const mine = await claims.#write();
        await claims.#refuseConflicts(mine);
        break;
      } catch (e) {
        const stopping = opts.signal?.aborted === true;
        if (!isTransient(e) || e instanceof InstanceClaimedError || attempt >= ACQUIRE_ATTEMPTS || stopping)
          throw explained(e);
        claims.#log.warn({ err: e }, 'could not claim the instance yet; trying again');
        await sleep(backoffDelay(attempt, ACQUIRE_BACKOFF), opts.signal ?? new AbortController().signal);
      }
    }
    claims.#log.info({ claim: claimName(opts.installation) }, 'instance claimed');
    return claims;
  }

  /** Renews the claim every CLAIM_RENEW_MS until release(); `lost` is told once if it must stop. */
  start(lost: (error: Error) => void): void {
    const renew = async (): Promise<boolean> => {
      if (this.#stopped) return false;
      try {
        await this.#refuseConflicts(await this.#write());
      } catch (e) {
        if (e instanceof InstanceClaimedError) {
          this.#log.error({ err: e }, 'instance claimed by another installation; stopping');
          lost(e);
          return false;
        }
        // The API server is away: the claim stays fresh for its lease, try again at the next turn.
        this.#log.warn({ err: e }, 'could not renew the instance claim');
      }
      return true;
    };
    const turn = () => {
      this.#renewing = renew().then((again) => {
        this.#renewing = undefined;
        if (again && !this.#stopped) this.#timer = setTimeout(turn, CLAIM_RENEW_MS);
      });
    };
    this.#timer = setTimeout(turn, CLAIM_RENEW_MS);
  }

  /** Whether an installation in `namespace` holds a fresh claim on this instance (as last listed). */
  isLive(namespace: string): boolean {
    return isLiveInstallation(this.#seen, this.#me.instance, namespace, this.#now());
  }

  /** Stops renewing and deletes the claim if this process renewed it last, so a successor need not wait. */
  async release(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    // A renewal in flight would otherwise write the claim again after the delete (found gone, it
    // creates it), leaving a stopped installation's claim fresh for a whole lease.
    await this.#renewing;
    await this.#deleteClaim();
  }

  async #deleteClaim(): Promise<void> {
    const ref = { apiVersion: API_VERSION, kind: CLAIM_KIND, name: claimName(this.#me) };
    try {
      const claim = await this.#objects.find<InstanceClaim>(ref);
      if (claim?.spec.holderIdentity !== this.#holder) return;
      await this.#objects.delete(ref, { preconditions: { resourceVersion: claim.metadata.resourceVersion } });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e))
        this.#log.warn({ err: e }, 'could not release the instance claim');
    }
  }

  /** Lists this instance's claims; throws InstanceClaimedError for a conflict this installation must yield to. */
  async #refuseConflicts(mine?: InstanceClaim): Promise<void> {
    const list = await this.#objects.list<InstanceClaim>(API_VERSION, CLAIM_KIND, undefined, {
      labelSelector: transactionSelector(this.#me.instance),
    });
    this.#seen = list.items;
    const now = this.#now();
    const conflict = conflictingClaims(list.items, this.#me, now).find((c) => !mine || yieldsTo(mine, c));
    if (conflict) {
      if (mine) {
        // Called by a renewal too, so not release(), which waits for the renewal in flight.
        this.#stopped = true;
        clearTimeout(this.#timer);
        await this.#deleteClaim();
      }
      throw new InstanceClaimedError(claimedMessage(this.#me, conflict, now));
    }
  }

  /**
   * Creates or renews this installation's claim, conditional on the version read; a claim of the
   * same name held by another namespace is taken only once it is stale.
   */
  async #write(): Promise<InstanceClaim> {
    const ref = { apiVersion: API_VERSION, kind: CLAIM_KIND, name: claimName(this.#me) };
    for (let attempt = 0; ; attempt++) {
      const held = await this.#objects.find<InstanceClaim>(ref);
      const now = this.#now();
      if (held && held.spec.controllerNamespace !== this.#me.controllerNamespace && isFresh(held, now)) {
        throw new InstanceClaimedError(claimedMessage(this.#me, held, now));
      }
      if (held && held.spec.controllerNamespace !== this.#me.controllerNamespace) {
        this.#log.warn(
          { claim: ref.name, from: held.spec.controllerNamespace },
          'taking over an instance claim its installation stopped renewing',
        );
      }
      const next = claimObject(this.#me, this.#holder, new Date(now), held, this.#acquiredAt);
      try {
        const written = held ? await this.#objects.replace(next) : await this.#objects.create(next);
        this.#acquiredAt ??= written.spec.acquireTime;
        return written;
      } catch (e) {
        // Someone wrote or deleted it between the read and the write: read it again, once or twice.
        if ((isConflict(e) || isAlreadyExists(e) || (held && isNotFound(e))) && attempt < 3) continue;
        throw e;
      }
    }
  }
}

/** A claim that cannot be read or written: say what is missing. */
function explained(e: unknown): unknown {
  if (e instanceof InstanceClaimedError) return e;
  if (isNotFound(e)) {
    return new Error(
      `the CustomResourceDefinition ${CLAIM_PLURAL}.${GROUP} is not installed: apply manifests/crd/ (helm upgrade does not update the chart's crds/)`,
      { cause: e },
    );
  }
  if (isForbidden(e)) {
    return new Error(
      `the controller may not read or write ${CLAIM_PLURAL}.${GROUP}: apply the ClusterRole of this version (manifests/rbac/cluster-role.yaml, or the chart's)`,
      { cause: e },
    );
  }
  return e;
}
