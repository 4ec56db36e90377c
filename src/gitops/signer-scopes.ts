/**
 * Which namespaces a signer may sign transactions for (--signer-namespaces): entries
 * `principal=namespace`, the principal written exactly as in the allowed-signers file (a pattern
 * such as *@team-a.example.com is matched as written, not expanded). A principal named in no
 * entry may sign for every namespace the repository policy allows; one named in some entries,
 * only for those. Namespaces, not directory paths: a directory's path says nothing about what it
 * touches (transaction.yaml names the namespace), and the namespace is already the unit of the
 * repository policy and of the ServiceAccounts a transaction runs as.
 */
import { dnsLabelProblem } from './names.ts';

export interface SignerScopes {
  /** Whether a commit signed by a key with these principals may act in `namespace`. */
  allows(principals: readonly string[], namespace: string): boolean;
  /** The configuration, for logs and docs: principal → namespaces. */
  readonly entries: ReadonlyMap<string, readonly string[]>;
}

export const UNSCOPED: SignerScopes = { allows: () => true, entries: new Map() };

/** Parses `principal=namespace` entries; throws an Error naming the bad entry. */
export function signerScopes(entries: readonly string[]): SignerScopes {
  const map = new Map<string, string[]>();
  for (const entry of entries.map((e) => e.trim()).filter((e) => e !== '')) {
    const eq = entry.lastIndexOf('=');
    const principal = entry.slice(0, Math.max(eq, 0)).trim();
    const namespace = entry.slice(eq + 1).trim();
    if (eq <= 0 || principal === '') throw new Error(`"${entry}": expected principal=namespace`);
    const problem = dnsLabelProblem(namespace);
    if (problem) throw new Error(`"${entry}": namespace ${problem}`);
    map.set(principal, [...(map.get(principal) ?? []), namespace]);
  }
  return {
    entries: map,
    allows: (principals, namespace) =>
      principals.some((p) => {
        const scoped = map.get(p);
        return scoped === undefined || scoped.includes(namespace);
      }),
  };
}
