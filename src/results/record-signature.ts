/**
 * Whether a results-branch record came from Janus: its commit signed (SSH, namespace "git") by a
 * key of an allowed-signers file, as `git verify-commit` checks it. What `janus history --verify`
 * shows an auditor; the same verdict code the watched branch's --verify-signatures uses.
 */
import type { AllowedSigners } from '../git/allowed-signers.ts';
import { readSignedCommit } from '../git/commit-signature.ts';
import { authorizeSignature, type CommitVerdict, checkSignature } from '../git/commit-verdict.ts';
import { GIT_INPUT_LIMITS, GitObjectTooLargeError } from '../git/input-limits.ts';
import type { ObjectStore } from '../git/object-store.ts';

export type RecordSignatureStatus = 'verified' | 'unsigned' | 'bad signature' | 'unknown key';

export interface RecordSignature {
  status: RecordSignatureStatus;
  /** verified: the principals of the key; otherwise why not, in words. */
  detail: string;
}

/** The four marks an auditor needs, from the verdict's finer problems. */
export function recordSignature(verdict: CommitVerdict): RecordSignature {
  if (verdict.ok) return { status: 'verified', detail: verdict.principals.join(',') };
  switch (verdict.problem) {
    case 'unsigned':
      return { status: 'unsigned', detail: verdict.message };
    // A valid signature by a key the file does not allow (now, or at the record's date).
    case 'unknown-key':
    case 'expired':
    case 'not-yet-valid':
      return { status: 'unknown key', detail: verdict.message };
    // Not a signature Janus can prove: forged, tampered, for another purpose, or unverifiable.
    default:
      return { status: 'bad signature', detail: verdict.message };
  }
}

/**
 * Reads commit `oid` from `store` and marks it against `allowed` at `now` (ms). A commit larger
 * than GIT_INPUT_LIMITS.commitReadBytes (64 KiB; Janus's own records are a few KiB) is not read:
 * a bad signature, so that one planted commit cannot stop the audit of the others.
 */
export async function verifyRecord(
  store: ObjectStore,
  oid: string,
  allowed: AllowedSigners,
  now: number,
): Promise<RecordSignature> {
  try {
    const commit = await readSignedCommit(store, oid);
    return recordSignature(authorizeSignature(checkSignature(commit), allowed, now));
  } catch (error) {
    if (!(error instanceof GitObjectTooLargeError)) throw error;
    const limit = GIT_INPUT_LIMITS.commitReadBytes / 1024;
    return { status: 'bad signature', detail: `the commit is larger than ${limit} KiB: not verified` };
  }
}
