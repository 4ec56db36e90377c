/**
 * Writes files into a tree without an index or worktree: only the trees on the paths of the
 * written files are rebuilt; every other subtree keeps its oid.
 *
 * A caller writing many times in a row (a batch of results, one commit each) passes one
 * WrittenTrees to every call: the trees it wrote are then taken from memory instead of being read
 * back (inflated and parsed) from the loose objects just written. Measured on the results of a
 * 400-directory poll (400 commits into one folder): 7.8 s of the push went to committing them.
 */
import type { ObjectStore, TreeEntry } from './object-store.ts';

/** New content per repository-relative path. */
export type FileUpdates = Readonly<Record<string, string | Uint8Array>>;

/** Trees written earlier in a batch, by oid: their entries, as written. */
export type WrittenTrees = Map<string, readonly TreeEntry[]>;

/** Returns the oid of `base` (undefined: an empty tree) with `files` written into it. */
export async function writeFiles(
  store: ObjectStore,
  base: string | undefined,
  files: FileUpdates,
  written: WrittenTrees = new Map(),
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
  const baseEntries = base === undefined ? [] : (written.get(base) ?? (await store.readTree(base)));
  for (const entry of baseEntries) entries.set(entry.path, entry);
  for (const [name, update] of nested) {
    if (update instanceof Uint8Array) {
      entries.set(name, { mode: '100644', path: name, oid: await store.writeBlob(update), type: 'blob' });
    } else {
      const existing = entries.get(name);
      const subtree = existing?.type === 'tree' ? existing.oid : undefined;
      entries.set(name, {
        mode: '040000',
        path: name,
        oid: await writeFiles(store, subtree, update, written),
        type: 'tree',
      });
    }
  }
  const tree = [...entries.values()];
  const oid = await store.writeTree(tree);
  written.set(oid, tree);
  return oid;
}

function checkName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name === '.git')
    throw new Error(`invalid path segment ${JSON.stringify(name)}`);
  return name;
}
