/**
 * --verify-signatures: a directory is applied only if EVERY commit that made it what it is (each
 * first-parent commit that changed it since it was created) is signed by an allowed signer who
 * may act in its namespace; a ROLLBACK file acts only if every commit since it appeared is. Not
 * the tip alone: a signed commit made on top of a pushed, unsigned one must not launder it.
 *
 * The cryptography is done once per commit id and cached across polls; which keys are allowed
 * is decided at every poll from the file as it is then, so removing a key takes effect at once.
 */
import type { AllowedSigners } from '../git/allowed-signers.ts';
import type { AllowedSignersSource } from '../git/allowed-signers-file.ts';
import { readSignedCommit } from '../git/commit-signature.ts';
import { authorizeSignature, checkSignature, type SignatureCheck } from '../git/commit-verdict.ts';
import { GitObjectTooLargeError } from '../git/input-limits.ts';
import type { GitSession } from '../git/repository.ts';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import {
  DEFAULT_MAX_DIRECTORY_HISTORY,
  type DirectoryHistory,
  directoryHistory,
} from './directory-history.ts';
import type { SignerScopes } from './signer-scopes.ts';
import type { TreeCache } from './tree-cache.ts';

/** Signature checks kept across polls (a check is ~100 bytes): more than any poll walks. */
export const SIGNATURE_CACHE_ENTRIES = 10_000;

export type DirectorySignatures =
  | { ok: true; signers: string[] }
  | { ok: false; commit: string | undefined; message: string };

export interface SignatureGateOptions {
  source: AllowedSignersSource;
  scopes: SignerScopes;
  now?: () => number;
  /** Told when the file changed, with the lines it cannot use. */
  onReload?(signers: AllowedSigners): void;
}

export class SignatureGate {
  readonly #o: SignatureGateOptions;
  readonly #checks = new Map<string, SignatureCheck>();

  constructor(options: SignatureGateOptions) {
    this.#o = options;
  }

  /** The gate for one poll, with the allowed signers as the file says now. */
  async forPoll(session: GitSession, trees: TreeCache, branch: string): Promise<PollSignatures> {
    const { signers, changed } = await this.#o.source.read();
    if (changed) this.#o.onReload?.(signers);
    const now = (this.#o.now ?? Date.now)();
    const memo = new Map<string, DirectoryHistory>();
    return {
      directory: async (commit, path, namespace, sinceFile) => {
        const history = await directoryHistory(session, trees, commit, path, {
          branch,
          memo,
          ...(sinceFile && { sinceFile }),
        });
        const found = new Set<string>();
        // Oldest first: the message names the first commit that went wrong.
        for (const oid of [...history.commits].reverse()) {
          const verdict = authorizeSignature(await this.#check(session, oid), signers, now);
          if (!verdict.ok) return { ok: false, commit: oid, message: verdict.message };
          if (!this.#o.scopes.allows(verdict.principals, namespace)) {
            const who = verdict.principals.join(', ');
            return {
              ok: false,
              commit: oid,
              message: `signer ${who} may not sign for namespace ${namespace}`,
            };
          }
          for (const p of verdict.principals) found.add(p);
        }
        if (!history.complete)
          return {
            ok: false,
            commit: undefined,
            message: `the directory's history could not be read back to the commit that created it (at most ${DEFAULT_MAX_DIRECTORY_HISTORY} commits are walked); it cannot be verified`,
          };
        return { ok: true, signers: [...found].sort() };
      },
    };
  }

  async #check(session: GitSession, oid: string): Promise<SignatureCheck> {
    const cached = this.#checks.get(oid);
    if (cached) return cached;
    let check: SignatureCheck;
    try {
      check = checkSignature(await readSignedCommit(session.store, oid));
    } catch (error) {
      if (!(error instanceof GitObjectTooLargeError)) throw error;
      check = { ok: false, problem: 'malformed', message: 'the commit is too large to verify' };
    }
    if (this.#checks.size >= SIGNATURE_CACHE_ENTRIES) {
      const oldest = this.#checks.keys().next().value;
      if (oldest !== undefined) this.#checks.delete(oldest);
    }
    this.#checks.set(oid, check);
    return check;
  }
}

export interface PollSignatures {
  /** Whether `path` at `commit` may act in `namespace`; `sinceFile`: only since that file appeared. */
  directory(
    commit: string,
    path: string,
    namespace: string,
    sinceFile?: string,
  ): Promise<DirectorySignatures>;
}

/** The rejection diagnostic of a directory the gate refused. */
export function signatureDiagnostic(
  path: string,
  refused: Extract<DirectorySignatures, { ok: false }>,
): Diagnostic {
  const at = refused.commit ? `commit ${refused.commit}: ` : '';
  return { code: 'commit-signature', file: path, message: `${at}${refused.message}` };
}
