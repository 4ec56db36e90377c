/**
 * An installation's claim on its instance (installation.ts explains instances). Two installations
 * of one instance in different namespaces each have a leader Lease of their own, and both select
 * the same Transactions: each would drive them, and the one a namespace did not let in would fail
 * them (`NamespaceNotGranted`). So each installation claims its instance in a cluster-scoped
 * InstanceClaim, for every namespace or for the one it watches (`--namespace`): a claim held by
 * another namespace whose scope overlaps, renewed within its lease, stops the newcomer at start
 * with a message naming the holder and the settings that separate them. Replicas of one
 * installation (one namespace) share the claim; a claim not renewed for its lease is free (the
 * installation is gone). Should two start at the same moment anyway, the one that acquired later
 * yields at its next renewal. Pure: src/manager/instance-claims.ts reads and writes the claims.
 */
import type { ObjectMeta } from '../api/meta.ts';
import { API_VERSION, CLAIM_KIND, type InstanceClaimSpec, LABEL_INSTANCE } from '../api/v1alpha1/index.ts';
import { EXPECTED_ERROR } from '../log/index.ts';

/** The condition on a Transaction another live installation of this instance wrote (installation-conflict.ts). */
export const INSTALLATION_CONFLICT = 'InstallationConflict';

/** A claim not renewed for this long is free. */
export const CLAIM_LEASE_SECONDS = 60;
/** How often the claim is renewed (and the others' looked at): well within the lease. */
export const CLAIM_RENEW_MS = 20_000;

export interface InstanceClaim {
  apiVersion: typeof API_VERSION;
  kind: typeof CLAIM_KIND;
  metadata: ObjectMeta;
  spec: InstanceClaimSpec;
  /** Any Kubernetes object may carry more top-level fields. */
  [key: string]: unknown;
}

/** Who claims: an installation's namespace, instance and scope. */
export interface Installation {
  controllerNamespace: string;
  /** Undefined: the default installation. */
  instance: string | undefined;
  /** Undefined: every namespace. */
  watchNamespace: string | undefined;
}

/**
 * `janus` (the default instance) or `janus-<instance>`, then `.<namespace>` for an installation
 * that watches one namespace: neither an instance nor a namespace holds a dot, so names never clash.
 */
export function claimName(i: Pick<Installation, 'instance' | 'watchNamespace'>): string {
  const base = i.instance === undefined ? 'janus' : `janus-${i.instance}`;
  return i.watchNamespace === undefined ? base : `${base}.${i.watchNamespace}`;
}

/**
 * The claim this installation writes, renewed `now`; `held` is the claim of that name as last read.
 * It keeps its acquire time while its namespace holds it, and `acquiredAt` (when this process
 * first held it) when it writes the claim anew: a replica recreating a claim another replica
 * released does not make the installation younger than one that started meanwhile.
 */
export function claimObject(
  me: Installation,
  holderIdentity: string,
  now: Date,
  held?: InstanceClaim,
  acquiredAt?: string,
): InstanceClaim {
  const mine = held !== undefined && held.spec.controllerNamespace === me.controllerNamespace;
  return {
    apiVersion: API_VERSION,
    kind: CLAIM_KIND,
    metadata: {
      name: claimName(me),
      ...(me.instance !== undefined && { labels: { [LABEL_INSTANCE]: me.instance } }),
      ...(held?.metadata.resourceVersion && { resourceVersion: held.metadata.resourceVersion }),
    },
    spec: {
      controllerNamespace: me.controllerNamespace,
      ...(me.instance !== undefined && { instance: me.instance }),
      ...(me.watchNamespace !== undefined && { watchNamespace: me.watchNamespace }),
      holderIdentity,
      acquireTime: mine ? held.spec.acquireTime : (acquiredAt ?? now.toISOString()),
      renewTime: now.toISOString(),
      leaseDurationSeconds: CLAIM_LEASE_SECONDS,
    },
  };
}

/** Renewed within its lease: its installation is alive. */
export function isFresh(claim: InstanceClaim, nowMs: number): boolean {
  const renewed = Date.parse(claim.spec.renewTime);
  return Number.isFinite(renewed) && nowMs - renewed < claim.spec.leaseDurationSeconds * 1000;
}

/** Two scopes share a namespace: either is every namespace, or both are the same one. */
export function overlaps(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}

/** The fresh claims of other namespaces on this instance whose scope overlaps this installation's. */
export function conflictingClaims(
  claims: readonly InstanceClaim[],
  me: Installation,
  nowMs: number,
): InstanceClaim[] {
  return claims.filter(
    (c) =>
      c.spec.controllerNamespace !== me.controllerNamespace &&
      c.spec.instance === me.instance &&
      overlaps(c.spec.watchNamespace, me.watchNamespace) &&
      isFresh(c, nowMs),
  );
}

/** Whether an installation in `namespace` holds a fresh claim on this instance: it is alive. */
export function isLiveInstallation(
  claims: readonly InstanceClaim[],
  instance: string | undefined,
  namespace: string,
  nowMs: number,
): boolean {
  return claims.some(
    (c) => c.spec.controllerNamespace === namespace && c.spec.instance === instance && isFresh(c, nowMs),
  );
}

/**
 * Of two installations that claimed overlapping scopes at about the same moment, the one that
 * acquired its claim later yields (the claim's name breaks a tie): both see the same two claims,
 * so exactly one yields.
 */
export function yieldsTo(mine: InstanceClaim, other: InstanceClaim): boolean {
  const [a, b] = [Date.parse(mine.spec.acquireTime), Date.parse(other.spec.acquireTime)];
  return a !== b ? a > b : mine.metadata.name > other.metadata.name;
}

const describeInstance = (instance: string | undefined) =>
  instance === undefined ? 'the default instance (no --instance)' : `instance "${instance}"`;
const describeScope = (watchNamespace: string | undefined) =>
  watchNamespace === undefined ? 'every namespace' : `namespace "${watchNamespace}"`;

/** An installation may not run: another holds its instance. An expected error: its message is the story. */
export class InstanceClaimedError extends Error {
  override readonly name = 'InstanceClaimedError';
  readonly [EXPECTED_ERROR] = true;
}

/** Why this installation may not run beside the holder of `claim`, and what separates them. */
export function claimedMessage(me: Installation, claim: InstanceClaim, nowMs: number): string {
  const { spec } = claim;
  const renewed = Math.max(0, Math.round((nowMs - Date.parse(spec.renewTime)) / 1000));
  return (
    `${describeInstance(me.instance)} is served, for ${describeScope(spec.watchNamespace)}, by the installation in namespace "${spec.controllerNamespace}" ` +
    `(InstanceClaim ${claim.metadata.name}, held by ${spec.holderIdentity}, renewed ${renewed}s ago): this installation, in namespace "${me.controllerNamespace}" ` +
    `for ${describeScope(me.watchNamespace)}, would drive the same Transactions. Give it an instance of its own ` +
    '(--instance, JANUS_INSTANCE, Helm value instance) and label its Transactions tx.janus.io/instance, or let each watch a namespace of its own ' +
    `(--namespace, JANUS_WATCH_NAMESPACE), or uninstall the other; a claim is free ${spec.leaseDurationSeconds}s after its installation stops renewing it`
  );
}
