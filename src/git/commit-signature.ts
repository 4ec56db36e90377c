/**
 * A commit's signature and the bytes it signs: the raw commit object without its `gpgsig`
 * header, exactly as git hands it to ssh-keygen or gpg. Cut from the raw bytes, never from a
 * re-encoded parse, so a commit in another encoding still verifies.
 */
import { Errors } from 'isomorphic-git';
import { GIT_INPUT_LIMITS } from './input-limits.ts';
import type { ObjectStore } from './object-store.ts';

export interface SignedCommit {
  oid: string;
  /** The gpgsig header's value (armored), undefined for an unsigned commit. */
  signature: string | undefined;
  /** What the signature covers. */
  payload: Buffer;
  /** The committer's time, seconds since the epoch: git checks a key's validity at it. */
  committedAt: number;
  /** The committer's "Name <email>", for messages. */
  committer: string;
  /** The parents' ids, in order. */
  parents: string[];
}

/** Reads commit `oid` for verification; larger than GIT_INPUT_LIMITS.commitReadBytes throws GitObjectTooLargeError. */
export async function readSignedCommit(store: ObjectStore, oid: string): Promise<SignedCommit> {
  const commit = await findSignedCommit(store, oid);
  if (!commit) throw new Errors.NotFoundError(oid);
  return commit;
}

/** As readSignedCommit; undefined when the store does not have the commit (beyond a shallow fetch). */
export async function findSignedCommit(store: ObjectStore, oid: string): Promise<SignedCommit | undefined> {
  const raw = await store.findRawCommit(oid, GIT_INPUT_LIMITS.commitReadBytes);
  return raw && splitSignature(oid, raw);
}

/** Splits a raw commit into its signature and the payload it signs. */
export function splitSignature(oid: string, raw: Buffer): SignedCommit {
  const headerEnd = raw.indexOf('\n\n');
  const headers = (headerEnd < 0 ? raw : raw.subarray(0, headerEnd + 1)).toString('latin1');
  const kept: string[] = [];
  const signature: string[] = [];
  let inSignature = false;
  let committer = '';
  const parents: string[] = [];
  for (const line of headers.split('\n').slice(0, -1)) {
    if (inSignature && line.startsWith(' ')) {
      signature.push(line.slice(1));
      continue;
    }
    inSignature = line.startsWith('gpgsig ');
    if (inSignature) signature.push(line.slice('gpgsig '.length));
    else kept.push(line);
    if (line.startsWith('committer ')) committer = line.slice('committer '.length);
    if (line.startsWith('parent ')) parents.push(line.slice('parent '.length));
  }
  const rest = headerEnd < 0 ? Buffer.alloc(0) : raw.subarray(headerEnd + 1);
  const payload = Buffer.concat([Buffer.from(kept.map((l) => `${l}\n`).join(''), 'latin1'), rest]);
  const when = /> (\d+) [+-]\d{4}$/.exec(committer);
  return {
    oid,
    signature: signature.length > 0 ? signature.join('\n') : undefined,
    payload,
    committedAt: when ? Number(when[1]) : 0,
    committer: Buffer.from(committer.replace(/ \d+ [+-]\d{4}$/, ''), 'latin1').toString('utf8'),
    parents,
  };
}
