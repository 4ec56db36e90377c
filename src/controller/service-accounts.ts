/**
 * Whether a transaction's ServiceAccount exists. Impersonating a ServiceAccount that does not
 * exist is not an error to the API server, so this is checked explicitly; a positive answer is
 * cached briefly so a busy namespace does not pay one read per transaction.
 */
import type { KubeClient } from '../kube/client.ts';
import { isForbidden, isNotFound, type KubeApiError } from '../kube/errors.ts';

/** Why a transaction cannot go on: a condition reason and a message for people. */
export interface Refusal {
  reason: string;
  message: string;
}

/**
 * The controller's own requests in a namespace that has not opted in to Janus are refused by
 * RBAC: that is a configuration to fix, said plainly, not an error to retry.
 */
export function notGranted(namespace: string, e: KubeApiError): Refusal {
  return {
    reason: 'NamespaceNotGranted',
    message: `Janus has not been granted namespace "${namespace}": bind the ClusterRole janus-tenant there to the controller's ServiceAccount (docs/security.md); the API server said: ${e.serverMessage}`,
  };
}

const TTL_MS = 30_000;

export class ServiceAccounts {
  readonly #client: KubeClient;
  readonly #now: () => number;
  readonly #seen = new Map<string, number>();

  constructor(client: KubeClient, now: () => number = Date.now) {
    this.#client = client;
    this.#now = now;
  }

  /**
   * Why a transaction running as this ServiceAccount cannot go on, if it cannot: the account
   * does not exist, or the namespace never granted Janus the right to look (and so to act).
   */
  async refusal(namespace: string, name: string): Promise<Refusal | undefined> {
    try {
      if (await this.exists(namespace, name)) return undefined;
    } catch (e) {
      if (isForbidden(e)) return notGranted(namespace, e);
      throw e;
    }
    return {
      reason: 'ServiceAccountNotFound',
      message: `ServiceAccount "${name}" not found in namespace "${namespace}": every change runs as it, so nothing more was done`,
    };
  }

  async exists(namespace: string, name: string): Promise<boolean> {
    const key = `${namespace}/${name}`;
    const seenAt = this.#seen.get(key);
    if (seenAt !== undefined && this.#now() - seenAt < TTL_MS) return true;
    try {
      await this.#client.request({
        method: 'GET',
        path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}`,
      });
      this.#seen.set(key, this.#now());
      if (this.#seen.size > 10_000) this.#seen.delete(this.#seen.keys().next().value as string);
      return true;
    } catch (e) {
      this.#seen.delete(key);
      if (isNotFound(e)) return false;
      throw e;
    }
  }
}
