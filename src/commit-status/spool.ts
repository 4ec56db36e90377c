/**
 * Statuses that nothing else would bring back after a crash, kept on disk until delivered: those
 * of rejected directories, which never become a Transaction (a Transaction's status is re-offered
 * from the cluster by every new term). One JSON file per status, named by a hash of what it says,
 * written atomically (temporary file, fsync, rename) before the rejection's result is queued, so
 * a crash at any instant leaves either both or a poll that rejects the directory again.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDirectory } from '../results/spool.ts';
import type { CommitStatus } from './state.ts';

const SUFFIX = '.json';

export interface SpooledStatus {
  key: string;
  status: CommitStatus;
}

export class StatusSpool {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async open(dir: string): Promise<StatusSpool> {
    await mkdir(dir, { recursive: true });
    return new StatusSpool(dir);
  }

  /** What a previous process left undelivered; an unreadable file is dropped (a status is not worth a crash loop). */
  async load(): Promise<SpooledStatus[]> {
    const out: SpooledStatus[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      const path = join(this.dir, name);
      const entry = name.endsWith(SUFFIX)
        ? await readFile(path, 'utf8')
            .then((text) => asSpooled(JSON.parse(text)))
            .catch(() => undefined)
        : undefined;
      if (entry) out.push(entry);
      else await rm(path, { force: true }); // a temporary file of a write that never completed
    }
    return out;
  }

  /** Durably stores `status`; once this resolves, a crash does not lose it. */
  async add(key: string, status: CommitStatus): Promise<void> {
    const path = this.#path(status);
    const temporary = `${path}.tmp`;
    const file = await open(temporary, 'w');
    try {
      await file.writeFile(JSON.stringify({ key, status }));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
    await syncDirectory(this.dir);
  }

  /** Forgets `status` once delivered (or given up); nothing to do for one never spooled. */
  async remove(status: CommitStatus): Promise<void> {
    await rm(this.#path(status), { force: true });
  }

  #path(status: CommitStatus): string {
    const what = JSON.stringify([status.sha, status.context, status.state, status.description]);
    return join(this.dir, `${createHash('sha256').update(what).digest('hex').slice(0, 32)}${SUFFIX}`);
  }
}

function asSpooled(value: unknown): SpooledStatus | undefined {
  const v = value as Partial<SpooledStatus> | null;
  const s = v?.status;
  if (typeof v?.key !== 'string' || !s) return undefined;
  const fields = [s.sha, s.context, s.state, s.description, s.phase];
  return fields.every((f) => typeof f === 'string') ? (v as SpooledStatus) : undefined;
}
