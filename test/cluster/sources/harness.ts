/**
 * Sources from Git end to end (docs/sources.md): a real Git server, `janus run` as a real process
 * with the real kustomize and helm, Source declarations written as users write them, and readers
 * of the Source objects and of the results branch.
 */
import { stringify } from 'yaml';
import type { Source, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { LABEL_SOURCE } from '../../../src/api/v1alpha1/index.ts';
import { cleanForRestore } from '../../../src/changes/undo-rules.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { eventually } from '../../support/eventually.ts';
import { ScratchWorkTree } from '../../support/git/git-server.ts';
import { renderTools } from '../../support/servers/render-tools.ts';
import type { AgeKey } from '../../support/servers/sops.ts';

export const SOURCE_API = 'tx.janus.io/v1alpha1';

/** `janus run` flags for sources: the real tools. */
export function sourceFlags(...more: string[]): string[] {
  const tools = renderTools();
  return ['--kustomize-path', tools.kustomize, '--helm-path', tools.helm, ...more];
}

/** What a deployer ServiceAccount may do for the sources of these tests. */
export const SOURCE_DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps', 'services', 'secrets', 'serviceaccounts'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['*'] },
];

/** A Source declaration, sources/<name>.yaml. */
export function declaration(
  name: string,
  namespace: string,
  spec: Record<string, unknown>,
): Record<string, string> {
  return {
    [`sources/${name}.yaml`]: stringify({
      apiVersion: SOURCE_API,
      kind: 'Source',
      metadata: { name, namespace },
      spec: { serviceAccountName: 'deployer', ...spec },
    }),
  };
}

/** The Secret janus-sops-age of `namespace`, holding `key` as Flux and Janus read it. */
export async function ageKeySecret(admin: Objects, namespace: string, key: AgeKey): Promise<void> {
  await admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'janus-sops-age', namespace },
    stringData: { 'team.agekey': `# public key: ${key.recipient}\n${key.identity}\n` },
  });
}

export function yamlDocuments(...objects: unknown[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

export async function getSource(
  admin: Objects,
  namespace: string,
  name: string,
): Promise<Source | undefined> {
  return admin.find<Source>({ apiVersion: SOURCE_API, kind: 'Source', namespace, name });
}

/** Waits until the Source's status satisfies `check` (which throws, saying why, until it does). */
export function untilSource(
  admin: Objects,
  namespace: string,
  name: string,
  check: (source: Source) => void,
  timeoutMs = 240_000,
): Promise<Source> {
  return eventually(
    async () => {
      const source = await getSource(admin, namespace, name);
      if (!source) throw new Error(`no Source ${namespace}/${name} yet`);
      check(source);
      return source;
    },
    { timeoutMs },
  );
}

/** The Source's last attempted commit came to `outcome` at `commit`. */
export function attempted(commit: string, outcome: string) {
  return (source: Source) => {
    const last = source.status?.lastAttempted;
    if (last?.revision !== commit || last.outcome !== outcome)
      throw new Error(
        `lastAttempted is ${last?.revision?.slice(0, 7)} ${last?.outcome} (${last?.reason ?? ''}), want ${commit.slice(0, 7)} ${outcome}`,
      );
  };
}

/** The Transactions of a source, oldest first. */
export async function sourceTransactions(
  admin: Objects,
  namespace: string,
  source: string,
): Promise<Transaction[]> {
  const list = await admin.list<Transaction>(SOURCE_API, 'Transaction', namespace, {
    labelSelector: `${LABEL_SOURCE}=${source}`,
  });
  return list.items.sort((a, b) =>
    (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''),
  );
}

/** What an object holds, as a rollback must bring it back: without what the server and controllers keep. */
export function contentOf(obj: KubeObject | undefined): unknown {
  if (!obj) return undefined;
  const clean = cleanForRestore(obj);
  const annotations = { ...clean.metadata.annotations };
  delete annotations['deployment.kubernetes.io/revision'];
  return { ...clean, metadata: { ...clean.metadata, annotations } };
}

/** Commits each of `commits` (null deletes a file) on main, then pushes them all at once; returns their shas. */
export async function pushTogether(
  bare: string,
  commits: readonly Record<string, string | null>[],
): Promise<string[]> {
  const tree = await ScratchWorkTree.clone(bare);
  try {
    await tree.checkout('origin/main');
    const shas: string[] = [];
    for (const [i, files] of commits.entries()) {
      await tree.write(files);
      shas.push(await tree.commit(`commit ${i + 1} of ${commits.length}`));
    }
    await tree.push('main');
    return shas;
  } finally {
    await tree.dispose();
  }
}
