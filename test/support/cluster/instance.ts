/**
 * An installation of its own for every controller and `janus run` a test starts
 * (src/controller/installation.ts): it handles only the Transactions labelled with its instance,
 * so no test's controller acts on another's Transactions in the shared test cluster, where other
 * test files run at the same time in other workers. A process scoped to a namespace runs the
 * instance named after that namespace (a namespace's name is a DNS label of at most 63
 * characters, as an instance is), so the fixtures (saga.ts's transaction(), the crash scenarios)
 * label the namespace's Transactions for it without the test passing anything; a process
 * without one gets a fresh instance, which its Transactions must be labelled with (`labelled`).
 */
import { randomBytes } from 'node:crypto';
import { LABEL_INSTANCE, type Transaction } from '../../../src/api/v1alpha1/index.ts';

/**
 * What a test asks of the installation it starts: undefined, one of its own (the default); a
 * string, that instance; null, the default installation (no --instance), for the tests of what
 * ships without one (its leader Lease's name, its claim).
 */
export type InstanceChoice = string | null | undefined;

/** The instance of the installation a test scoped to `namespace` starts, and of its Transactions. */
export const namespaceInstance = (namespace: string): string => namespace;

/** An instance no other test runs. */
export const freshInstance = (): string => `test-${randomBytes(4).toString('hex')}`;

/** The instance a process runs (undefined: the default installation). */
export function instanceOf(choice: InstanceChoice, namespace: string | undefined): string | undefined {
  if (choice === null) return undefined;
  return choice ?? (namespace === undefined ? freshInstance() : namespaceInstance(namespace));
}

/** The flags that start a process as the installation of `instance`. */
export function instanceArgs(
  instance: string | undefined,
  env: Record<string, string> | undefined,
): string[] {
  // One way to choose it: a JANUS_INSTANCE the flag silently overrode would mislead the reader.
  if (env?.JANUS_INSTANCE !== undefined)
    throw new Error('choose the installation with the option `instance`, not JANUS_INSTANCE');
  return instance === undefined ? [] : ['--instance', instance];
}

/** `txn` for the installation of `instance`: labelled with it (undefined: the default installation's, unlabelled). */
export function labelled(txn: Transaction, instance: string | undefined): Transaction {
  const { [LABEL_INSTANCE]: _other, ...labels } = txn.metadata.labels ?? {};
  const all = instance === undefined ? labels : { ...labels, [LABEL_INSTANCE]: instance };
  const { labels: _labels, ...metadata } = txn.metadata;
  return { ...txn, metadata: { ...metadata, ...(Object.keys(all).length > 0 && { labels: all }) } };
}
