/**
 * Objects written in a burst, as the results writer does before a push: per result a blob, the
 * trees on its path and a commit, hundreds of them at once after a big poll. isomorphic-git writes
 * each object alone, with about seven round trips to libuv's thread pool (a SHA-1 through
 * WebCrypto, a CompressionStream, an existence check, the file), one after the other because each
 * tree needs its children's ids: 400 results took 7.8 s, mostly waiting. Here an object is hashed
 * and compressed in this thread (a few microseconds for a result's size), kept in memory, and the
 * files are written together at the end, several at a time.
 *
 * Encodings are git's, byte for byte what isomorphic-git writes (object-batch.test.ts compares
 * the ids). A loose object is written under a temporary name in its folder and renamed, so a
 * crash never leaves a truncated object under its final name (git gc removes tmp_obj_ files).
 *
 * The batch keeps every object it computed, after flush too, for the push's pack (`objects`):
 * also those the store had already, since a replay after a failed push makes the same objects
 * again and the remote may still lack them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommitInfo, Signature } from './commit-info.ts';
import { deflateObject } from './deflate.ts';
import type { ObjectStore, TreeEntry } from './object-store.ts';
import type { PackObject, PackObjectType } from './pack-writer.ts';
import { compareCodePoints } from './tree-parse.ts';

/** Signs a commit's bytes (without the gpgsig header); returns the armored signature. */
export type CommitSigner = (payload: Buffer) => string;

/** Loose object files written at once by flush. */
const WRITE_CONCURRENCY = 8;

export class ObjectBatch {
  readonly #store: ObjectStore;
  /** oid → the object: its type, and its bytes with git's "type size\0" header in front. */
  readonly #objects = new Map<string, { type: PackObjectType; wrapped: Buffer; headerBytes: number }>();
  /** Objects not written by flush yet. */
  #unwritten: string[] = [];
  /** The entries of the trees of this batch, so reading them back costs nothing. */
  readonly #trees = new Map<string, readonly TreeEntry[]>();

  constructor(store: ObjectStore) {
    this.#store = store;
  }

  /** Objects waiting for flush. */
  get size(): number {
    return this.#unwritten.length;
  }

  /** Every object of the batch, commits first (flushed or not), for a pack. */
  objects(): PackObject[] {
    const order: Record<PackObjectType, number> = { commit: 0, tree: 1, blob: 2 };
    return [...this.#objects.values()]
      .sort((a, b) => order[a.type] - order[b.type])
      .map(({ type, wrapped, headerBytes }) => ({ type, content: wrapped.subarray(headerBytes) }));
  }

  /** A tree of this batch from memory, any other from the store. */
  async readTree(oid: string): Promise<TreeEntry[]> {
    const mine = this.#trees.get(oid);
    return mine ? [...mine] : this.#store.readTree(oid);
  }

  async writeBlob(content: Uint8Array): Promise<string> {
    return this.#add('blob', content);
  }

  async writeTree(entries: readonly TreeEntry[]): Promise<string> {
    const sorted = [...entries].sort((a, b) => compareCodePoints(treeSortName(a), treeSortName(b)));
    const parts = sorted.flatMap((e) => [
      Buffer.from(`${e.mode.replace(/^0/, '')} ${e.path}\0`, 'utf8'),
      Buffer.from(e.oid, 'hex'),
    ]);
    const oid = this.#add('tree', Buffer.concat(parts));
    this.#trees.set(oid, sorted);
    return oid;
  }

  /**
   * With `sign`, the commit carries a `gpgsig` header (last, as git writes it) holding the
   * signature of the commit without it: what `git commit -S` makes and `git verify-commit` checks.
   */
  async writeCommit(commit: Omit<CommitInfo, 'oid'>, sign?: CommitSigner): Promise<string> {
    const headers = [
      `tree ${commit.tree}`,
      ...commit.parents.map((p) => `parent ${p}`),
      `author ${person(commit.author)}`,
      `committer ${person(commit.committer)}`,
    ];
    const message = normalizeMessage(commit.message);
    if (sign) {
      const payload = Buffer.from(`${headers.join('\n')}\n\n${message}`, 'utf8');
      const lines = sign(payload).replace(/\n+$/, '').split('\n');
      headers.push(`gpgsig ${lines.join('\n ')}`);
    }
    return this.#add('commit', Buffer.from(`${headers.join('\n')}\n\n${message}`, 'utf8'));
  }

  /** Writes every object of the batch into the store's gitdir (those it has already are kept). */
  async flush(): Promise<void> {
    const pending = this.#unwritten;
    this.#unwritten = [];
    const folders = new Set<string>();
    const next = async (): Promise<void> => {
      for (let oid = pending.pop(); oid; oid = pending.pop()) {
        const object = this.#objects.get(oid);
        if (object === undefined) continue;
        const folder = join(this.#store.gitdir, 'objects', oid.slice(0, 2));
        const file = join(folder, oid.slice(2));
        if (await exists(file)) continue;
        if (!folders.has(folder)) {
          await mkdir(folder, { recursive: true });
          folders.add(folder);
        }
        const temporary = join(folder, `tmp_obj_${randomBytes(6).toString('hex')}`);
        await writeFile(temporary, deflateObject(object.wrapped));
        await rename(temporary, file);
      }
    };
    await Promise.all(Array.from({ length: WRITE_CONCURRENCY }, next));
  }

  #add(type: PackObjectType, content: Uint8Array): string {
    const header = Buffer.from(`${type} ${content.length}\0`);
    const wrapped = Buffer.concat([header, content]);
    const oid = createHash('sha1').update(wrapped).digest('hex');
    if (!this.#objects.has(oid)) {
      this.#objects.set(oid, { type, wrapped, headerBytes: header.length });
      this.#unwritten.push(oid);
    }
    return oid;
  }
}

/** Git orders a tree's entries by name, a folder's name as if it ended in '/'. */
function treeSortName(entry: TreeEntry): string {
  return entry.mode === '040000' ? `${entry.path}/` : entry.path;
}

/** "Name <email> 1700000000 +0100"; Signature's offset is in minutes, positive west of UTC. */
function person({ name, email, timestamp, timezoneOffset }: Signature): string {
  const sign = timezoneOffset > 0 || Object.is(timezoneOffset, -0) ? '-' : '+';
  const minutes = Math.abs(timezoneOffset);
  const zone = `${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`;
  return `${name} <${email}> ${timestamp} ${sign}${zone}`;
}

/** No carriage returns, no leading newlines, exactly one at the end (as isomorphic-git writes). */
function normalizeMessage(message: string): string {
  return `${message.replace(/\r/g, '').replace(/^\n+/, '').replace(/\n+$/, '')}\n`;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
