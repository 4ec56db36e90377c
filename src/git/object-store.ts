/**
 * Typed access to one gitdir's objects and refs. An instance lives for one serialized operation:
 * its `cache` (isomorphic-git's parsed-packfile cache) is shared by every call in that operation
 * and dropped afterwards, so memory does not grow across polls. `close()` ends the operation: it
 * closes the pack files kept open for reading object headers (object-read-cache.ts).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { join } from 'node:path';
import git, { Errors, type TreeEntry } from 'isomorphic-git';
import { parseCommitStart } from './commit-head.ts';
import type { CommitInfo } from './commit-info.ts';
import { GIT_INPUT_LIMITS, GitObjectTooLargeError } from './input-limits.ts';
import { ObjectReadCache } from './object-read-cache.ts';
import { readObjectSize, readObjectStart } from './object-size.ts';
import { PackedObjects } from './packed-object.ts';
import { parseTree } from './tree-parse.ts';

export type { TreeEntry };

export const ZERO_OID = '0000000000000000000000000000000000000000';

/** What readBlobWithin reads of a loose object in one go before it asks for its size. */
const SMALL_OBJECT_BYTES = 16 * 1024;

export class ObjectStore {
  readonly gitdir: string;
  readonly cache: object = {};
  readonly #reads: ObjectReadCache;
  readonly #packed: PackedObjects;
  readonly #maxTreeBytes: number;

  /** `maxTreeBytes`: the default limit of readTree. */
  constructor(gitdir: string, maxTreeBytes: number = GIT_INPUT_LIMITS.maxTreeBytes) {
    this.gitdir = gitdir;
    this.#reads = new ObjectReadCache(gitdir);
    this.#packed = new PackedObjects(this.#reads);
    this.#maxTreeBytes = maxTreeBytes;
  }

  /** Closes the pack files kept open during the operation; reads afterwards open their own. */
  close(): Promise<void> {
    return this.#reads.close();
  }

  /**
   * The commit; of a commit larger than GIT_INPUT_LIMITS.commitReadBytes, only that many bytes
   * are inflated and its message is cut there (marked). Anyone who may push writes commits: a
   * message of a gigabyte of zeros, a few MiB compressed, would otherwise be inflated and decoded
   * whole on every poll that walks past it.
   */
  async readCommit(oid: string): Promise<CommitInfo> {
    const limit = GIT_INPUT_LIMITS.commitReadBytes;
    const size = await readObjectSize(this.gitdir, oid, this.#reads);
    if (size !== undefined && size > limit) {
      const head = await readObjectStart(this.gitdir, oid, limit, this.#reads);
      if (head?.type === 'commit') return parseCommitStart(oid, head.start, head.size, limit);
      // Stored as a delta (its start needs its base): not read at all.
      if (head === undefined)
        throw new GitObjectTooLargeError('commit', oid, size, limit, 'read of a commit');
    }
    const packed = await this.#packed.read(oid, limit);
    if (packed?.type === 'commit' && packed.content) {
      const parsed = parseWholeCommit(oid, packed.content, limit);
      if (parsed) return parsed;
    }
    const { commit } = await git.readCommit({ fs, gitdir: this.gitdir, oid, cache: this.cache });
    return {
      oid,
      tree: commit.tree,
      parents: commit.parent,
      message: commit.message,
      author: commit.author,
      committer: commit.committer,
    };
  }

  /**
   * The raw bytes of commit `oid`, as its signature covers them; undefined when this store does not
   * have it. Larger than `maxBytes` (read from its header): GitObjectTooLargeError, nothing inflated.
   * A packed commit is read straight from its pack (packed-object.ts), anything else through
   * isomorphic-git.
   */
  async findRawCommit(oid: string, maxBytes: number): Promise<Buffer | undefined> {
    const packed = await this.#packed.read(oid, maxBytes);
    if (packed?.type === 'commit' && packed.content) return packed.content;
    const size = packed?.size ?? (await this.objectSize(oid));
    if (size !== undefined && size > maxBytes)
      throw new GitObjectTooLargeError('commit', oid, size, maxBytes, 'a signed commit may take');
    try {
      const { object } = await git.readObject({
        fs,
        gitdir: this.gitdir,
        oid,
        format: 'content',
        cache: this.cache,
      });
      return Buffer.from(object as Uint8Array);
    } catch (error) {
      if (error instanceof Errors.NotFoundError) return undefined;
      throw error;
    }
  }

  /** The commit, or undefined when this store does not have it (beyond a shallow fetch). */
  async findCommit(oid: string): Promise<CommitInfo | undefined> {
    try {
      return await this.readCommit(oid);
    } catch (error) {
      if (error instanceof Errors.NotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * The tree's entries, once its size (read from its Git header) is known to be at most
   * `maxBytes`: a tree of two million entries is a few MiB compressed, and parsing it would
   * build two million objects. Throws GitObjectTooLargeError beyond that. A packed tree is read
   * straight from its pack (packed-object.ts); anything else through isomorphic-git.
   */
  async readTree(oid: string, maxBytes: number = this.#maxTreeBytes): Promise<TreeEntry[]> {
    const packed = await this.#packed.read(oid, maxBytes);
    const parsed = packed?.type === 'tree' && packed.content && parseTree(packed.content);
    if (parsed) return parsed;
    const size = await this.objectSize(oid);
    if (size !== undefined && size > maxBytes)
      throw new GitObjectTooLargeError('tree', oid, size, maxBytes, 'a tree may take');
    const { tree } = await git.readTree({ fs, gitdir: this.gitdir, oid, cache: this.cache });
    return tree;
  }

  async readBlob(oid: string): Promise<Uint8Array> {
    const { blob } = await git.readBlob({ fs, gitdir: this.gitdir, oid, cache: this.cache });
    return blob;
  }

  /**
   * The size of object `oid` in bytes, read from the object's header without inflating it (see
   * object-size.ts); undefined when the header cannot be read that way.
   */
  objectSize(oid: string): Promise<number | undefined> {
    return readObjectSize(this.gitdir, oid, this.#reads);
  }

  /**
   * The blob's bytes, or its size when it is larger than `maxBytes`: checked from the object's
   * header first, so an oversized blob is never inflated (isomorphic-git would inflate it whole,
   * and keep the pack it sits in in memory). A packed blob is read straight from its pack
   * (packed-object.ts); anything else through isomorphic-git.
   */
  async readBlobWithin(
    oid: string,
    maxBytes: number,
  ): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; size: number }> {
    const packed = await this.#packed.read(oid, maxBytes);
    if (packed?.type === 'blob' && packed.content && packed.content.length <= maxBytes)
      return { ok: true, bytes: packed.content };
    if (packed && !packed.content) return { ok: false, size: packed.size };
    // A small loose object (the results writer's own files): read and inflated in one go, not
    // sized first and then read again through isomorphic-git (~3x the time).
    const small = packed
      ? undefined
      : await readObjectStart(this.gitdir, oid, SMALL_OBJECT_BYTES, this.#reads);
    if (small?.type === 'blob' && small.start.length === small.size) {
      return small.size > maxBytes ? { ok: false, size: small.size } : { ok: true, bytes: small.start };
    }
    const size = await this.objectSize(oid);
    if (size !== undefined && size > maxBytes) return { ok: false, size };
    const bytes = await this.readBlob(oid);
    return bytes.length > maxBytes ? { ok: false, size: bytes.length } : { ok: true, bytes };
  }

  /** The oid of the entry at `path` ('/'-separated) below tree `treeOid`, or undefined. */
  async resolvePath(treeOid: string, path: string): Promise<TreeEntry | undefined> {
    let entry: TreeEntry | undefined = { mode: '040000', path: '', oid: treeOid, type: 'tree' };
    for (const name of path.split('/').filter((p) => p !== '')) {
      if (entry?.type !== 'tree') return undefined;
      entry = (await this.readTree(entry.oid)).find((e) => e.path === name);
    }
    return entry;
  }

  async hasObject(oid: string): Promise<boolean> {
    // From the pack indexes or the loose object's header: isomorphic-git would read the whole
    // pack holding it into memory, and keep it there for the operation.
    if ((await this.#reads.findPacked(oid)) !== undefined) return true;
    if ((await this.objectSize(oid)) !== undefined) return true;
    try {
      await git.readObject({ fs, gitdir: this.gitdir, oid, format: 'deflated', cache: this.cache });
      return true;
    } catch (error) {
      if (error instanceof Errors.NotFoundError) return false;
      throw error;
    }
  }

  /** The oid a ref points to, or undefined when the ref does not exist. */
  async resolveRef(ref: string): Promise<string | undefined> {
    try {
      return await git.resolveRef({ fs, gitdir: this.gitdir, ref });
    } catch (error) {
      if (error instanceof Errors.NotFoundError) return undefined;
      throw error;
    }
  }

  async writeRef(ref: string, oid: string): Promise<void> {
    await git.writeRef({ fs, gitdir: this.gitdir, ref, value: oid, force: true });
  }

  /** Removes a ref; nothing happens when it does not exist. */
  async deleteRef(ref: string): Promise<void> {
    await git.deleteRef({ fs, gitdir: this.gitdir, ref }).catch((error: unknown) => {
      if (!(error instanceof Errors.NotFoundError)) throw error;
    });
  }

  async writeBlob(content: Uint8Array): Promise<string> {
    return git.writeBlob({ fs, gitdir: this.gitdir, blob: content });
  }

  async writeTree(entries: TreeEntry[]): Promise<string> {
    return git.writeTree({ fs, gitdir: this.gitdir, tree: entries });
  }

  async writeCommit(commit: Omit<CommitInfo, 'oid'>): Promise<string> {
    return git.writeCommit({
      fs,
      gitdir: this.gitdir,
      commit: {
        tree: commit.tree,
        parent: commit.parents,
        message: commit.message,
        author: commit.author,
        committer: commit.committer,
      },
    });
  }

  /** Commits at the edge of a shallow history: their parents were never fetched. */
  /**
   * Adds a pack and its index, named for the pack's checksum, as git names them: the pack first,
   * so that no index names a pack not there. Reads after this see its objects.
   */
  async addPack(packFile: string, checksum: string, idx: Buffer): Promise<void> {
    const base = join(this.gitdir, 'objects', 'pack', `pack-${checksum}`);
    await fs.promises.rename(packFile, `${base}.pack`);
    await fs.promises.writeFile(`${base}.idx.tmp`, idx);
    await fs.promises.rename(`${base}.idx.tmp`, `${base}.idx`);
    this.#reads.relist();
  }

  /** Records commits made shallow by a fetch (their parents absent) and those no longer so. */
  async updateShallow(shallow: readonly string[], unshallow: readonly string[]): Promise<void> {
    if (shallow.length === 0 && unshallow.length === 0) return;
    const commits = await this.shallowCommits();
    for (const oid of shallow) commits.add(oid);
    for (const oid of unshallow) commits.delete(oid);
    const file = join(this.gitdir, 'shallow');
    if (commits.size === 0) return fs.promises.rm(file, { force: true });
    // A name of its own: another process sharing the cache may be writing the file too.
    const temporary = `${file}.${randomUUID()}.tmp`;
    await fs.promises.writeFile(
      temporary,
      [...commits]
        .sort()
        .map((oid) => `${oid}\n`)
        .join(''),
    );
    await fs.promises.rename(temporary, file);
  }

  async shallowCommits(): Promise<Set<string>> {
    try {
      const text = await fs.promises.readFile(`${this.gitdir}/shallow`, 'utf8');
      return new Set(text.split('\n').filter((line) => line.length === 40));
    } catch {
      return new Set();
    }
  }
}

/**
 * A commit read whole from its pack, parsed as isomorphic-git parses one; undefined for anything
 * that parser would read differently (it reads those): the pack read keeps isomorphic-git from
 * loading the whole pack into memory for one commit, and holding it for the operation.
 */
function parseWholeCommit(oid: string, content: Buffer, limit: number): CommitInfo | undefined {
  try {
    return parseCommitStart(oid, content, content.length, limit);
  } catch {
    return undefined;
  }
}
