/**
 * A commit's tree written from the Git object store into a private temporary folder (0700) for a
 * render: the whole tree, since a kustomization may name any folder of the repository, within
 * CHECKOUT_LIMITS (entries, bytes, bytes of one file). What is never written:
 *
 * - a symbolic link: a link whose target stays in the checkout and, link after link, reaches a
 *   file is written as a copy of that file; any other link (absolute, climbing out of the
 *   checkout, to a folder, to nothing) refuses the commit, naming the link and its target,
 *   wherever it is: which files a tool reads is not known before it runs;
 * - a submodule (a commit in the tree): refused, naming it;
 * - a name Git itself would refuse (`..`, a separator, empty).
 *
 * Files are written 0600 and folders 0700: nothing in the checkout is executable. The folder also
 * holds the sandbox's HOME, beside the checkout, never inside it. remove() deletes it all; the
 * renderer calls it after the render, also when it failed.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CommitInfo } from '../git/commit-info.ts';
import { GitObjectTooLargeError } from '../git/input-limits.ts';
import type { TreeEntry } from '../git/object-store.ts';
import { CHECKOUT_LIMITS, type CheckoutLimits } from './limits.ts';
import { folderOf, resolveWithin, safeEntryName } from './paths.ts';
import { RenderInputError } from './render-error.ts';

/** The part of the object store a checkout reads (ObjectStore has it). */
export interface TreeSource {
  readCommit(oid: string): Promise<CommitInfo>;
  readTree(oid: string): Promise<TreeEntry[]>;
  readBlobWithin(
    oid: string,
    maxBytes: number,
  ): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; size: number }>;
}

export interface Checkout {
  /** The repository's files at the commit. */
  readonly root: string;
  /** An empty private folder beside it: the sandboxed tool's HOME. */
  readonly home: string;
  /** Deletes the checkout and the home. */
  remove(): Promise<void>;
}

/** A private temporary folder with `root` and `home` in it; files written by `fill`. */
export async function privateFolder(fill: (root: string) => Promise<void>): Promise<Checkout> {
  // mkdtemp makes the folder 0700.
  const base = await mkdtemp(join(tmpdir(), 'janus-render-'));
  const checkout: Checkout = {
    root: join(base, 'repo'),
    home: join(base, 'home'),
    remove: () => rm(base, { recursive: true, force: true }),
  };
  try {
    await mkdir(checkout.root, { mode: 0o700 });
    await mkdir(checkout.home, { mode: 0o700 });
    await fill(checkout.root);
    return checkout;
  } catch (error) {
    await checkout.remove();
    throw error;
  }
}

/**
 * A folder on disk as the checkout (`janus validate` renders the sources of a local repository):
 * the files are the folder's own, never copied; only the private HOME beside them is made, and
 * removed after the render. The pre-checks and the tools' load restrictor still keep a render
 * inside the folder; symbolic links there are the caller's (a CI checkout of its own repository).
 */
export async function localCheckout(folder: string): Promise<Checkout> {
  const base = await mkdtemp(join(tmpdir(), 'janus-render-'));
  const home = join(base, 'home');
  await mkdir(home, { mode: 0o700 });
  return { root: resolve(folder), home, remove: () => rm(base, { recursive: true, force: true }) };
}

interface FileEntry {
  readonly mode: string;
  readonly oid: string;
}

/** Writes the tree of `commit` into a new private folder. RenderInputError for what is refused. */
export function checkoutCommit(
  store: TreeSource,
  commit: string,
  limits: CheckoutLimits = CHECKOUT_LIMITS,
): Promise<Checkout> {
  return privateFolder(async (root) => {
    const { tree } = await store.readCommit(commit);
    const files = new Map<string, FileEntry>();
    const folders = new Set<string>(['']);
    try {
      await listTree(store, tree, files, folders, limits);
    } catch (error) {
      // A folder whose Git tree is over the poller's bound: the commit's content, refused like it.
      if (error instanceof GitObjectTooLargeError) throw new RenderInputError(error.message);
      throw error;
    }
    let bytes = 0;
    for (const folder of [...folders].sort()) {
      if (folder !== '') await mkdir(join(root, folder), { mode: 0o700 });
    }
    for (const [path, entry] of files) {
      const blob =
        entry.mode === '120000' ? await linkedBlob(store, path, entry, files, folders, limits) : entry;
      const read = await store.readBlobWithin(blob.oid, limits.maxFileBytes);
      if (!read.ok) {
        throw new RenderInputError(
          `${path} is ${read.size} bytes, more than the ${limits.maxFileBytes} bytes a file of a render may have`,
          path,
        );
      }
      bytes += read.bytes.length;
      if (bytes > limits.maxBytes) {
        throw new RenderInputError(
          `the commit's files are more than the ${limits.maxBytes} bytes a render may write (at ${path})`,
          path,
        );
      }
      await writeFile(join(root, path), read.bytes, { mode: 0o600, flag: 'wx' });
    }
  });
}

/** Every file and folder below `tree`, breadth first, within the entry limit. */
async function listTree(
  store: TreeSource,
  tree: string,
  files: Map<string, FileEntry>,
  folders: Set<string>,
  limits: CheckoutLimits,
): Promise<void> {
  const queue: { path: string; oid: string }[] = [{ path: '', oid: tree }];
  let entries = 0;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const entry of await store.readTree(next.oid)) {
      const path = next.path === '' ? entry.path : `${next.path}/${entry.path}`;
      if (!safeEntryName(entry.path))
        throw new RenderInputError(`${path}: a file name a checkout cannot have`, next.path);
      if (++entries > limits.maxEntries) {
        throw new RenderInputError(
          `the commit has more than the ${limits.maxEntries} files and folders a render may write (at ${path})`,
          path,
        );
      }
      if (entry.type === 'commit')
        throw new RenderInputError(`${path} is a submodule; a render reads this repository only`, path);
      if (entry.type === 'tree') {
        folders.add(path);
        queue.push({ path, oid: entry.oid });
      } else {
        files.set(path, { mode: entry.mode, oid: entry.oid });
      }
    }
  }
}

/** The file a symbolic link leads to within the checkout, link after link; refused otherwise. */
async function linkedBlob(
  store: TreeSource,
  link: string,
  entry: FileEntry,
  files: ReadonlyMap<string, FileEntry>,
  folders: ReadonlySet<string>,
  limits: CheckoutLimits,
): Promise<FileEntry> {
  let at = link;
  let current = entry;
  for (let hop = 0; hop <= limits.maxLinkHops; hop++) {
    if (current.mode !== '120000') return current;
    const read = await store.readBlobWithin(current.oid, 4096);
    const target = read.ok ? Buffer.from(read.bytes).toString('utf8') : '(a target of more than 4096 bytes)';
    const resolved = read.ok ? resolveWithin(folderOf(at), target) : undefined;
    const refuse = (why: string) =>
      new RenderInputError(`${link} is a symbolic link to ${JSON.stringify(target)}, ${why}`, link);
    if (resolved === undefined) throw refuse('outside the checkout; a render reads the repository only');
    if (folders.has(resolved)) throw refuse('a folder; only links to files are followed (as copies)');
    const found = files.get(resolved);
    if (!found) throw refuse('which is no file of the commit');
    at = resolved;
    current = found;
  }
  throw new RenderInputError(
    `${link} is a symbolic link through more than ${limits.maxLinkHops} other links`,
    link,
  );
}
