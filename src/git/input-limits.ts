/**
 * What one object of a watched repository may make the poller parse. Blobs are bounded per file
 * (src/gitops/options.ts); these bound the objects around them, each checked from the object's
 * Git header before it is inflated or parsed, so a hostile push costs a few bytes of I/O, not a
 * list of millions of entries built on every poll.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

export const GIT_INPUT_LIMITS = {
  /**
   * The largest tree object parsed (the repository's root, the transactions folder). An entry
   * takes 28 bytes or more (`40000 x\0` and a 20-byte oid), so this is at most ~150,000 entries,
   * and ~45,000 transaction directories with the longest names (63 characters). Parsed, a tree
   * this size peaks at ~40 MB of heap and is held as ~22 MB (measured: docs/git.md, Limits).
   */
  maxTreeBytes: 4 * MiB,
  /**
   * Bytes of a commit object read: its headers (tree, parents, author, committer) and the start
   * of its message. The rest of a longer message is never inflated; nothing Janus does with a
   * watched commit needs it, and its own results-branch commits are far smaller.
   */
  commitReadBytes: 64 * KiB,
  /**
   * The largest object a fetched pack may hold, inflated: indexing a pack names each object by
   * hashing all of it (pack-indexer.ts). Far beyond any file a forge takes (GitHub refuses files
   * over 100 MiB), while a pack whose object claims more fails the fetch before it is inflated.
   */
  maxFetchedObjectBytes: 1024 * MiB,
  /**
   * Objects in one fetched pack. Indexing keeps ~180 bytes of bookkeeping per object until it is
   * done (measured: 17 MiB of heap for 100,000), so a pack of millions of tiny objects, a few tens
   * of MiB on the wire, would take more memory than the Deployment allows: this is ~90 MiB. A
   * repository's tip of 45,000 transaction directories (the most a 4 MiB tree lists) is ~315,000.
   */
  maxFetchedObjects: 500_000,
  /**
   * The largest delta of a fetched pack, its base or its result: resolving one holds all three
   * in memory. git makes no delta of files over 512 MiB (core.bigFileThreshold); one between 64
   * and 512 MiB fails the fetch, naming it, rather than a controller under a 512 MiB limit.
   */
  maxFetchedDeltaBytes: 64 * MiB,
  /** Bases held at once while their deltas are applied: the branch points of one delta tree. */
  maxFetchedHeldBytes: 128 * MiB,
  /**
   * All of a fetched pack's objects inflated and its deltas applied, together: bounds the CPU a
   * pack of a few MiB costs (zlib bombs, a small delta copying a large base many times, millions
   * of one-byte copies, tree entries read for the connectivity check: each counted at what it
   * costs in time), at ~1 GB/s a few seconds a fetch. A pack a forge sends for a GitOps repository inflates to a few times
   * its size, and a fetch brings at most --max-fetch-bytes (64 MiB by default).
   */
  maxFetchedInflatedBytes: 4096 * MiB,
} as const;

/**
 * The most bytes an entry of a transaction directory's tree can take: mode and space (7), a
 * name of up to 255 bytes (what file systems allow), its NUL and a 20-byte oid.
 */
export const MAX_TREE_ENTRY_BYTES = 7 + 255 + 1 + 20;

/** An object of the repository is larger than a limit above; nothing of it was parsed. */
export class GitObjectTooLargeError extends Error {
  readonly oid: string;
  readonly type: 'tree' | 'commit';
  readonly size: number;
  readonly limit: number;
  /** The watched commit being read when the object was met, once known. */
  commit: string | undefined;

  constructor(type: 'tree' | 'commit', oid: string, size: number, limit: number, why: string) {
    super(`${type} ${oid} is ${size} bytes, more than the ${limit} bytes ${why}; it was not read`);
    this.name = 'GitObjectTooLargeError';
    this.type = type;
    this.oid = oid;
    this.size = size;
    this.limit = limit;
  }
}

/** Runs `read`, naming `commit` in a GitObjectTooLargeError it throws (the innermost commit wins). */
export async function readingCommit<T>(commit: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof GitObjectTooLargeError) error.commit ??= commit;
    throw error;
  }
}
