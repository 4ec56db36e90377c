/**
 * Several installations of Janus in one cluster (two Helm releases, two `janus run`): each owns a
 * declared set of Transactions, as Flux's sharding (`sharding.fluxcd.io/key` and
 * `--watch-label-selector`) and ingress classes do. An installation started with
 * `--instance <name>` handles only the Transactions labelled `tx.janus.io/instance: <name>`; the
 * default installation (no `--instance`) handles only those without the label, so a cluster
 * with one installation works exactly as before. The selector goes into the informer's LIST and
 * WATCH: an installation never even receives another's Transactions.
 *
 * What an installation names after itself (its leader Lease, its Git cursor and control
 * ConfigMaps) includes the instance, so two in one namespace never share one. Two installations
 * of one instance in different namespaces are kept apart by their claims (instance-claim.ts).
 */

import type { ObjectMeta } from '../api/meta.ts';
import { LABEL_INSTANCE } from '../api/v1alpha1/index.ts';

/** The leader Lease of the default installation (and of every one before instances existed). */
export const DEFAULT_LEADER_ELECTION_ID = 'janus-controller';

/** A label value that is also a DNS label: it goes into the Lease's name. */
const INSTANCE_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A label value's limit; it also keeps `janus-controller-<instance>` a valid Lease name. */
export const MAX_INSTANCE_LENGTH = 63;

/** Why `value` cannot name an instance; undefined when it can. */
export function instanceProblem(value: string): string | undefined {
  if (value.length > MAX_INSTANCE_LENGTH)
    return `at most ${MAX_INSTANCE_LENGTH} characters (a label value), got ${value.length}`;
  if (!INSTANCE_PATTERN.test(value))
    return `lowercase letters, digits and '-', starting and ending with a letter or digit (a DNS label), got "${value}"`;
  return undefined;
}

/** The instance from a flag or variable: an empty one is the default installation. */
export function instanceOf(flag: string | undefined): string | undefined {
  return flag === undefined || flag === '' ? undefined : flag;
}

/** The label selector of the Transactions this installation handles (and of its instance's claims). */
export function transactionSelector(instance: string | undefined): string {
  return instance === undefined ? `!${LABEL_INSTANCE}` : `${LABEL_INSTANCE}=${instance}`;
}

/** Whether this installation handles a Transaction with these labels (what the selector selects). */
export function handles(instance: string | undefined, labels: ObjectMeta['labels']): boolean {
  return labels?.[LABEL_INSTANCE] === instance;
}

/**
 * The labels of a Transaction this installation creates (from Git): its own instance label, and
 * never another's, whatever the transaction.yaml said; undefined when there are none.
 */
export function withInstanceLabel(
  labels: Readonly<Record<string, string>> | undefined,
  instance: string | undefined,
): Record<string, string> | undefined {
  const { [LABEL_INSTANCE]: _dropped, ...rest } = labels ?? {};
  const result = instance === undefined ? rest : { ...rest, [LABEL_INSTANCE]: instance };
  return Object.keys(result).length > 0 ? result : undefined;
}

/**
 * The leader Lease's name: `--leader-election-id` when given, else `janus-controller`, suffixed
 * with the instance when there is one. Named after the instance, not the release or the pod: two
 * Deployments of one instance in one namespace are one installation, so exactly one acts; named
 * otherwise, two releases left without an instance would both drive the same Transactions (a
 * lock names the Transaction, not the controller, so both would believe they hold it).
 */
export function leaderElectionId(explicit: string | undefined, instance: string | undefined): string {
  if (explicit) return explicit;
  return instance === undefined ? DEFAULT_LEADER_ELECTION_ID : `${DEFAULT_LEADER_ELECTION_ID}-${instance}`;
}
