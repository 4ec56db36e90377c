/**
 * The one way the parser reads files, whether they sit in a Git commit or on disk, so
 * `janus validate` and the materializer run exactly the same rules.
 */

export type EntryType = 'file' | 'directory' | 'symlink' | 'submodule' | 'other';

export interface DirectoryEntry {
  name: string;
  type: EntryType;
}

export type FileContent = { ok: true; bytes: Uint8Array } | { ok: false; size: number };

export interface DirectoryReader {
  /**
   * Entries of the directory at `path` ('/'-separated, relative to the reader's root; '' is the
   * root), in any order; undefined when there is no directory there. With `maxEntries`, a
   * reader that can tell from the directory's size alone that it holds more throws
   * TooManyEntriesError instead of listing it (a Git tree of millions of entries is a few MiB).
   */
  list(path: string, maxEntries?: number): Promise<DirectoryEntry[] | undefined>;
  /** The file's bytes, or its size when it is larger than `maxBytes` (a reader may avoid reading it). */
  read(path: string, maxBytes: number): Promise<FileContent>;
}

/** The directory at `path` holds more entries than were asked for; it was not listed. */
export class TooManyEntriesError extends Error {
  readonly path: string;

  constructor(path: string, detail: string) {
    super(`${path}: ${detail}`);
    this.name = 'TooManyEntriesError';
    this.path = path;
  }
}

export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}

/** A reader over an in-memory map of path → content; for tests and for callers that hold files already. */
export function memoryReader(files: Readonly<Record<string, string | Uint8Array>>): DirectoryReader {
  const encoder = new TextEncoder();
  const contents = new Map<string, Uint8Array>();
  const directories = new Map<string, Map<string, DirectoryEntry>>([['', new Map()]]);
  for (const [path, content] of Object.entries(files)) {
    contents.set(path, typeof content === 'string' ? encoder.encode(content) : content);
    const parts = path.split('/');
    for (let i = 0; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      const name = parts[i] ?? '';
      const entries = directories.get(parent) ?? new Map<string, DirectoryEntry>();
      directories.set(parent, entries);
      entries.set(name, { name, type: i === parts.length - 1 ? 'file' : 'directory' });
    }
  }
  return {
    list: async (path) => {
      const entries = directories.get(path);
      return entries ? [...entries.values()] : undefined;
    },
    read: async (path, maxBytes) => {
      const bytes = contents.get(path);
      if (!bytes) throw new Error(`no file at ${path}`);
      return bytes.length > maxBytes ? { ok: false, size: bytes.length } : { ok: true, bytes };
    },
  };
}
