/**
 * Writes files into a tree without an index or worktree: only the trees on the paths of the
 * written files are rebuilt; every other subtree keeps its oid.
 * Writing many times in a row (a batch of results, one commit each), pass an ObjectBatch as the
 * store: the trees it wrote are then taken from memory, not read back from disk.
 */
import type { ObjectStore, TreeEntry } from './object-store.ts';

/** What writeFiles needs of a store (an ObjectStore, or an ObjectBatch over one). */
export type TreeStore = Pick<ObjectStore, 'readTree' | 'writeBlob' | 'writeTree'>;

/** New content per repository-relative path. */
export type FileUpdates = Readonly<Record<string, string | Uint8Array>>;

/** Returns the oid of `base` (undefined: an empty tree) with `files` written into it. */
export async function writeFiles(
  store: TreeStore,
  base: string | undefined,
  files: FileUpdates,
): Promise<string> {
  const nested = new Map<string, FileUpdates | Uint8Array>();
  const groups = new Map<string, Record<string, string | Uint8Array>>();
  for (const [path, content] of Object.entries(files)) {
    const slash = path.indexOf('/');
    if (slash < 0) {
      nested.set(checkName(path), typeof content === 'string' ? new TextEncoder().encode(content) : content);
    } else {
      const dir = checkName(path.slice(0, slash));
      const group = groups.get(dir) ?? {};
      group[path.slice(slash + 1)] = content;
      groups.set(dir, group);
    }
  }
  for (const [dir, group] of groups) nested.set(dir, group);

  const entries = new Map<string, TreeEntry>();
  for (const entry of base === undefined ? [] : await store.readTree(base)) entries.set(entry.path, entry);
  for (const [name, update] of nested) {
    if (update instanceof Uint8Array) {
      entries.set(name, { mode: '100644', path: name, oid: await store.writeBlob(update), type: 'blob' });
    } else {
      const existing = entries.get(name);
      const subtree = existing?.type === 'tree' ? existing.oid : undefined;
      entries.set(name, {
        mode: '040000',
        path: name,
        oid: await writeFiles(store, subtree, update),
        type: 'tree',
      });
    }
  }
  return store.writeTree([...entries.values()]);
}

function checkName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name === '.git')
    throw new Error(`invalid path segment ${JSON.stringify(name)}`);
  return name;
}
