/**
 * The materializer's two requests to the cluster, as the controller identity: create a
 * Transaction from a directory, and ask for the rollback of one. Errors that are about the
 * directory (an invalid object, a missing namespace, a name taken by someone else) come back as
 * refusals to record on the results branch; anything else (network, RBAC of Janus itself) throws,
 * so the poll fails and is retried.
 */
import {
  ANNOTATION_REQUEST_ROLLBACK,
  API_VERSION,
  KIND,
  LABEL_INSTANCE,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { handles, withInstanceLabel } from '../controller/installation.ts';
import { PatchType } from '../kube/client.ts';
import { isAlreadyExists, isForbidden, isInvalid, isNotFound, type KubeApiError } from '../kube/errors.ts';
import type { Objects } from '../kube/resources.ts';
import { TRANSACTION_MAPPING } from '../kube/transactions.ts';
import type { RollbackRefusal } from './materialize-records.ts';
import { adoption } from './provenance.ts';
import { type RollbackOrigin, rollbackVerdict } from './rollback-verdict.ts';

export type CreateOutcome =
  | { kind: 'created'; transaction: Transaction }
  /** It exists already, came from the same directory of the same repository, and Janus stamped it: ours. */
  | { kind: 'exists'; transaction: Transaction }
  | { kind: 'refused'; field?: string; message: string };

export type RollbackOutcome = { kind: 'requested' } | { kind: 'refused'; refusal: RollbackRefusal };

export interface TransactionApi {
  /** Creates it; one found under its name is adopted only if its stamp was made with `stampKey`. */
  create(transaction: Transaction, stampKey: string): Promise<CreateOutcome>;
  /** Requests the rollback of namespace/name only if it is the Transaction `origin` created. */
  requestRollback(
    namespace: string,
    name: string,
    reason: string,
    origin: RollbackOrigin,
  ): Promise<RollbackOutcome>;
}

export class KubeTransactionApi implements TransactionApi {
  readonly #objects: Objects;
  readonly #instance: string | undefined;

  /** `instance`: this installation's, which every Transaction it creates carries (and no other). */
  constructor(objects: Objects, instance?: string) {
    this.#objects = objects;
    this.#instance = instance;
    // So that creating one costs no discovery request.
    objects.discovery.seed(TRANSACTION_MAPPING);
  }

  async create(wanted: Transaction, stampKey: string): Promise<CreateOutcome> {
    // A transaction.yaml may not hand its directory to another installation.
    const labels = withInstanceLabel(wanted.metadata.labels, this.#instance);
    const { labels: _ignored, ...metadata } = wanted.metadata;
    const transaction = { ...wanted, metadata: { ...metadata, ...(labels && { labels }) } };
    try {
      return { kind: 'created', transaction: await this.#objects.create(transaction) };
    } catch (error) {
      if (isAlreadyExists(error)) return this.#adopt(transaction, stampKey);
      if (isInvalid(error))
        return { kind: 'refused', message: `the API server refused it: ${serverMessage(error)}` };
      if (isNotFound(error)) {
        return {
          kind: 'refused',
          field: 'metadata.namespace',
          message: `namespace ${JSON.stringify(transaction.metadata.namespace)} does not exist`,
        };
      }
      if (isForbidden(error)) return forbidden(transaction, error);
      throw error;
    }
  }

  async requestRollback(
    namespace: string,
    name: string,
    reason: string,
    origin: RollbackOrigin,
  ): Promise<RollbackOutcome> {
    const current = await this.#objects.find<Transaction>(ref(namespace, name));
    const verdict = rollbackVerdict(current, origin);
    if (verdict.kind !== 'request' || !current)
      return verdict.kind === 'refused' ? verdict : { kind: 'requested' };
    // Conditional on the version judged (and so on its uid): a namesake created meanwhile is not touched.
    await this.#objects.patch(
      ref(namespace, name),
      {
        metadata: {
          annotations: { [ANNOTATION_REQUEST_ROLLBACK]: reason },
          uid: current.metadata.uid,
          resourceVersion: current.metadata.resourceVersion,
        },
      },
      PatchType.merge,
    );
    return { kind: 'requested' };
  }

  async #adopt(wanted: Transaction, stampKey: string): Promise<CreateOutcome> {
    const { namespace = '', name } = wanted.metadata;
    const existing = await this.#objects.find<Transaction>(ref(namespace, name));
    if (!existing)
      throw new Error(`Transaction ${namespace}/${name} already exists, then could not be found`);
    const verdict = adoption(wanted, existing, stampKey);
    if (!verdict.adopt) return { kind: 'refused', field: 'metadata.name', message: verdict.message };
    if (handles(this.#instance, existing.metadata.labels)) return { kind: 'exists', transaction: existing };
    const owner = existing.metadata.labels?.[LABEL_INSTANCE];
    return {
      kind: 'refused',
      field: 'metadata.name',
      message: `a Transaction ${namespace}/${name} already exists and belongs to ${owner === undefined ? 'the default installation of Janus' : `the installation of Janus with --instance ${owner}`} (label ${LABEL_INSTANCE}); rename the directory`,
    };
  }
}

function ref(namespace: string, name: string) {
  return { apiVersion: API_VERSION, kind: KIND, namespace, name };
}

function serverMessage(error: KubeApiError): string {
  return error.serverMessage;
}

/**
 * The API server would not let Janus create it: the namespace never opted in (no janus-tenant
 * binding), or the admission policy found that Janus may not act as its ServiceAccount. Both are
 * decisions of the cluster's owners, reported like any other refusal rather than retried.
 */
function forbidden(transaction: Transaction, error: KubeApiError): CreateOutcome {
  const namespace = JSON.stringify(transaction.metadata.namespace);
  if (/ValidatingAdmissionPolicy/.test(error.serverMessage)) {
    return {
      kind: 'refused',
      field: 'spec.serviceAccountName',
      message: `the API server's admission policy refused it: ${serverMessage(error)}`,
    };
  }
  return {
    kind: 'refused',
    field: 'metadata.namespace',
    message: `Janus has not been granted namespace ${namespace} (bind the ClusterRole janus-tenant there to the controller's ServiceAccount, see docs/security.md): ${serverMessage(error)}`,
  };
}
