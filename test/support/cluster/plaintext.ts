/**
 * Where a test of SOPS-encrypted values looks for them in clear: everything Janus wrote or said in
 * a namespace that is not a target Secret or a rollback store's Secret (Transactions, Sources,
 * ConfigMaps, Events of both APIs), the whole repository with its results branch, and the
 * process's log; and a Secret's data decoded.
 */
import { expect } from 'vitest';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { git } from '../git/git-server.ts';

export async function everythingJanusWrote(
  admin: Objects,
  namespace: string,
  bareRepository: string,
  logs: string,
): Promise<string> {
  const list = async (apiVersion: string, kind: string) =>
    JSON.stringify((await admin.list(apiVersion, kind, namespace)).items);
  return [
    await list('tx.janus.io/v1alpha1', 'Transaction'),
    await list('tx.janus.io/v1alpha1', 'Source'),
    await list('v1', 'ConfigMap'),
    await list('v1', 'Event'),
    await list('events.k8s.io/v1', 'Event'),
    await git(bareRepository, 'log', '-p', '--all'),
    logs,
  ].join('\n');
}

/** None of `secrets` in `haystack`, as it is or base64-encoded. */
export function expectNowhere(haystack: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    expect(haystack).not.toContain(secret);
    expect(haystack).not.toContain(Buffer.from(secret).toString('base64'));
  }
}

/** The Secret's data, decoded. */
export async function secretData(
  admin: Objects,
  namespace: string,
  name: string,
): Promise<Record<string, string>> {
  const secret = await admin.get<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace,
    name,
  });
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}
