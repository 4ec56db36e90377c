/**
 * Whether a transaction's ServiceAccount exists. Impersonating a ServiceAccount that does not
 * exist is not an error to the API server, so this is checked explicitly; a positive answer is
 * cached briefly so a busy namespace does not pay one read per transaction.
 */
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';

const TTL_MS = 30_000;

export class ServiceAccounts {
  readonly #client: KubeClient;
  readonly #now: () => number;
  readonly #seen = new Map<string, number>();

  constructor(client: KubeClient, now: () => number = Date.now) {
    this.#client = client;
    this.#now = now;
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
