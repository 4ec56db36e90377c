/**
 * Results not yet on the remote, kept on disk so neither an outage nor a restart loses them. One
 * JSON file per result, named by a sequence number (their commit order), written atomically
 * (temporary file, fsync, rename), removed once the push that carried it succeeded.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { asResultRecord, type ResultRecord } from './result-record.ts';

export interface SpoolEntry {
  readonly id: string;
  readonly record: ResultRecord;
}

const SUFFIX = '.json';
const ID_DIGITS = 12;

export class ResultSpool {
  readonly dir: string;
  readonly #entries: SpoolEntry[];
  #next: number;

  private constructor(dir: string, entries: SpoolEntry[], next: number) {
    this.dir = dir;
    this.#entries = entries;
    this.#next = next;
  }

  /**
   * Loads what a previous process left. Unreadable entries are renamed `*.corrupt` and reported
   * through `onCorrupt`, never silently dropped.
   */
  static async open(dir: string, onCorrupt: (file: string) => void = () => {}): Promise<ResultSpool> {
    await mkdir(dir, { recursive: true });
    const names = (await readdir(dir)).sort();
    const entries: SpoolEntry[] = [];
    let next = 0;
    for (const name of names) {
      const path = join(dir, name);
      if (name.endsWith('.tmp')) {
        await rm(path, { force: true }); // a write that never completed, so never acknowledged
        continue;
      }
      if (!name.endsWith(SUFFIX)) continue;
      const id = name.slice(0, -SUFFIX.length);
      next = Math.max(next, Number.parseInt(id, 10) + 1 || 0);
      const record = await readFile(path, 'utf8')
        .then((text) => asResultRecord(JSON.parse(text)))
        .catch(() => undefined);
      if (record) entries.push({ id, record });
      else {
        await rename(path, `${path}.corrupt`);
        onCorrupt(path);
      }
    }
    return new ResultSpool(dir, entries, next);
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Pending entries, oldest first. */
  entries(): readonly SpoolEntry[] {
    return [...this.#entries];
  }

  /**
   * Durably stores `record`; once this resolves, a crash does not lose it.
   *
   * Its two fsyncs are for a crash of the machine (power, kernel), not of this process: after
   * kill -9 the page cache keeps what write() and rename() did, and neither is needed. For the
   * machine, both are: the file's, before the rename, so that the name never reaches the disk
   * ahead of the bytes (a rename to a new name is not ordered after the data on ext4 or XFS: the
   * entry could come back empty and be set aside as corrupt); the directory's, after it, so that
   * the name itself is on disk when the caller is told the result is safe.
   */
  async add(queued: ResultRecord): Promise<SpoolEntry> {
    const record: ResultRecord = { id: randomUUID(), ...queued };
    const id = String(this.#next++).padStart(ID_DIGITS, '0');
    const path = join(this.dir, `${id}${SUFFIX}`);
    const temporary = `${path}.tmp`;
    const file = await open(temporary, 'w');
    try {
      await file.writeFile(JSON.stringify(record));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
    await syncDirectory(this.dir);
    const entry = { id, record };
    // Concurrent adds may finish out of order; commits follow the order of the add calls.
    this.#entries.push(entry);
    this.#entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return entry;
  }

  async remove(done: readonly SpoolEntry[]): Promise<void> {
    const ids = new Set(done.map((e) => e.id));
    for (const id of ids) await rm(join(this.dir, `${id}${SUFFIX}`), { force: true });
    const remaining = this.#entries.filter((e) => !ids.has(e.id));
    this.#entries.splice(0, this.#entries.length, ...remaining);
  }
}

/** Makes a rename durable; best effort where directories cannot be opened for sync. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // not supported on this file system
  } finally {
    await handle.close();
  }
}
