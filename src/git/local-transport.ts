/**
 * A repository on the local disk, used in place: its own gitdir is the object store, "fetch" reads
 * the branch ref, and "push" moves the ref after checking nobody else moved it.
 */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { GitAccessError } from './errors.ts';
import type { ObjectStore } from './object-store.ts';
import type { Transport } from './transport.ts';

export class LocalTransport implements Transport {
  readonly display: string;

  constructor(path: string) {
    this.display = path;
  }

  /** The gitdir of a repository at `path`: `path/.git` (a directory or a `gitdir:` file), or `path` if bare. */
  static async findGitdir(path: string): Promise<string> {
    const dotGit = join(path, '.git');
    const info = await stat(dotGit).catch(() => undefined);
    if (info?.isDirectory()) return dotGit;
    if (info?.isFile()) {
      const match = /^gitdir:\s*(.+)$/m.exec(await readFile(dotGit, 'utf8'));
      if (match?.[1]) return resolve(path, match[1].trim());
    }
    const head = await stat(join(path, 'HEAD')).catch(() => undefined);
    const objects = await stat(join(path, 'objects')).catch(() => undefined);
    if (head?.isFile() && objects?.isDirectory()) return path;
    throw new GitAccessError('not-found', `${path} is not a Git repository`, { repository: path });
  }

  async fetch(store: ObjectStore, branch: string): Promise<string | undefined> {
    return store.resolveRef(`refs/heads/${branch}`);
  }

  async deepen(): Promise<boolean> {
    return false; // a local repository holds its whole history
  }

  /** `oid`'s objects are in the repository already (`store` is its own gitdir). */
  async push(store: ObjectStore, branch: string, oid: string, expected: string | undefined): Promise<void> {
    const ref = `refs/heads/${branch}`;
    // isomorphic-git has no compare-and-swap ref update; the window between read and write is
    // tiny, and every writer of the results branch goes through the same serialized queue.
    const current = await store.resolveRef(ref);
    if (current !== expected) {
      throw new GitAccessError(
        'rejected',
        `update ${this.display} (${branch}): the branch moved to ${current ?? 'nothing'}`,
        {
          repository: this.display,
          ref: branch,
        },
      );
    }
    await store.writeRef(ref, oid);
  }
}
