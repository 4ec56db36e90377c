/**
 * Whether a results-branch record came from Janus: its commit signed (SSH, namespace "git") by a
 * key of an allowed-signers file, as `git verify-commit` checks it. What `janus history --verify`
 * shows an auditor; the same verdict code the watched branch's --verify-signatures uses.
 */
import type { AllowedSigners } from '../git/allowed-signers.ts';
import { readSignedCommit, type SignedCommit } from '../git/commit-signature.ts';
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

/** Marks a commit read for verification against `allowed` at `now` (ms). */
export function markCommit(commit: SignedCommit, allowed: AllowedSigners, now: number): RecordSignature {
  return recordSignature(authorizeSignature(checkSignature(commit), allowed, now));
}

/** What a commit larger than a signed commit may take is marked: not read, so not verified. */
export const TOO_LARGE: RecordSignature = {
  status: 'bad signature',
  detail: `the commit is larger than ${GIT_INPUT_LIMITS.commitReadBytes / 1024} KiB: not verified`,
};

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
    return markCommit(await readSignedCommit(store, oid), allowed, now);
  } catch (error) {
    if (!(error instanceof GitObjectTooLargeError)) throw error;
    return TOO_LARGE;
  }
}
