/** DirectoryReader over a directory on disk, for `janus validate` in pull-request CI. */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DirectoryEntry, DirectoryReader, EntryType } from './directory-reader.ts';

/** Reads below `root`; symbolic links are reported, never followed (Git would store them as links). */
export function diskReader(root: string): DirectoryReader {
  const full = (path: string) => (path === '' ? root : join(root, ...path.split('/')));
  return {
    async list(path) {
      let dirents: Dirent[];
      try {
        dirents = await readdir(full(path), { withFileTypes: true });
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      return dirents.map((d): DirectoryEntry => ({ name: d.name, type: entryType(d) }));
    },
    async read(path, maxBytes) {
      const { size } = await stat(full(path));
      if (size > maxBytes) return { ok: false, size };
      return { ok: true, bytes: await readFile(full(path)) };
    },
  };
}

function entryType(d: Dirent): EntryType {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'directory';
  if (d.isFile()) return 'file';
  return 'other';
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
