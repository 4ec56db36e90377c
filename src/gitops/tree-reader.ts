/** The gitops DirectoryReader over the files of one commit, read straight from the object store. */
import { MAX_TREE_ENTRY_BYTES } from '../git/input-limits.ts';
import type { ObjectStore } from '../git/object-store.ts';
import {
  type DirectoryEntry,
  type DirectoryReader,
  type EntryType,
  TooManyEntriesError,
} from './directory-reader.ts';

/** Reads paths relative to the root of `commit`. Use within the GitRepository.run that owns `store`. */
export function commitReader(store: ObjectStore, commit: string): DirectoryReader {
  let rootTree: Promise<string> | undefined;
  const tree = () => {
    rootTree ??= store.readCommit(commit).then((c) => c.tree);
    return rootTree;
  };
  return {
    async list(path, maxEntries) {
      const entry = await store.resolvePath(await tree(), path);
      if (entry?.type !== 'tree') return undefined;
      if (maxEntries !== undefined) await refuseLargeDirectory(store, entry.oid, path, maxEntries);
      return (await store.readTree(entry.oid)).map(
        (e): DirectoryEntry => ({ name: e.path, type: entryType(e.mode) }),
      );
    },
    async read(path, maxBytes) {
      const entry = await store.resolvePath(await tree(), path);
      if (entry?.type !== 'blob') throw new Error(`no file at ${path} in commit ${commit}`);
      return store.readBlobWithin(entry.oid, maxBytes);
    },
  };
}

/**
 * Throws TooManyEntriesError when tree `oid`'s size, read from its header, is more than
 * `maxEntries` entries can take: the directory is refused before its entries are parsed.
 */
export async function refuseLargeDirectory(
  store: ObjectStore,
  oid: string,
  path: string,
  maxEntries: number,
): Promise<void> {
  const size = await store.objectSize(oid);
  const most = maxEntries * MAX_TREE_ENTRY_BYTES;
  if (size !== undefined && size > most) {
    throw new TooManyEntriesError(
      path,
      `the directory's Git tree is ${size} bytes, more than ${maxEntries} entries can take (${most} bytes); at most ${maxEntries} entries are allowed`,
    );
  }
}

/** What a tree entry's Git mode says it is. */
export function entryType(mode: string): EntryType {
  switch (mode) {
    case '040000':
      return 'directory';
    case '100644':
    case '100755':
      return 'file';
    case '120000':
      return 'symlink';
    case '160000':
      return 'submodule';
    default:
      return 'other';
  }
}
