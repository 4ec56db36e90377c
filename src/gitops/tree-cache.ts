/**
 * Parsed trees of one poll, by oid. The transactions folder of a large repository is one tree of
 * thousands of entries; every path lookup below it would parse it again. With this cache each
 * tree is parsed once per poll, so reading n directories costs O(n), not O(n × folder size).
 */
import type { ObjectStore, TreeEntry } from '../git/object-store.ts';
import type { DirectoryEntry, DirectoryReader } from './directory-reader.ts';
import { entryType, refuseLargeDirectory } from './tree-reader.ts';

export class TreeCache {
  readonly store: ObjectStore;
  readonly #trees = new Map<string, Promise<Map<string, TreeEntry>>>();

  constructor(store: ObjectStore) {
    this.store = store;
  }

  /** The entries of tree `oid`, by name. */
  entries(oid: string): Promise<Map<string, TreeEntry>> {
    let entries = this.#trees.get(oid);
    if (!entries) {
      entries = this.store.readTree(oid).then((tree) => new Map(tree.map((e) => [e.path, e])));
      this.#trees.set(oid, entries);
    }
    return entries;
  }

  /** The entry at `path` ('/'-separated) below tree `oid`; the tree itself for ''. */
  async resolve(oid: string, path: string): Promise<TreeEntry | undefined> {
    let entry: TreeEntry | undefined = { mode: '040000', path: '', oid, type: 'tree' };
    for (const name of path.split('/').filter((p) => p !== '')) {
      if (entry?.type !== 'tree') return undefined;
      entry = (await this.entries(entry.oid)).get(name);
    }
    return entry;
  }

  /** A DirectoryReader over the files of the commit whose root tree is `tree`. */
  reader(tree: string): DirectoryReader {
    return {
      list: async (path, maxEntries) => {
        const entry = await this.resolve(tree, path);
        if (entry?.type !== 'tree') return undefined;
        if (maxEntries !== undefined) await refuseLargeDirectory(this.store, entry.oid, path, maxEntries);
        return [...(await this.entries(entry.oid)).values()].map(
          (e): DirectoryEntry => ({ name: e.path, type: entryType(e.mode) }),
        );
      },
      read: async (path, maxBytes) => {
        const entry = await this.resolve(tree, path);
        if (entry?.type !== 'blob') throw new Error(`no file at ${path} in tree ${tree}`);
        return this.store.readBlobWithin(entry.oid, maxBytes);
      },
    };
  }
}
