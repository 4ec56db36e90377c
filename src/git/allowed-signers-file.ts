/**
 * The allowed-signers file as a mounted Secret or ConfigMap: read at every poll (a few KiB) and
 * parsed again only when its text changed, so an edit takes effect at the next poll without a
 * restart, as the Git token file does. A file that cannot be read fails the poll: with signature
 * verification on, nothing is applied without knowing who may sign.
 */
import { readFile } from 'node:fs/promises';
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { type AllowedSigners, parseAllowedSigners } from './allowed-signers.ts';

/** A file far larger than any team's list of keys is refused (≈ 1,000 ed25519 lines take 100 KiB). */
export const MAX_ALLOWED_SIGNERS_BYTES = 1024 * 1024;

/** The file is missing, unreadable or too large: the poll fails and says so; nothing is applied. */
export class AllowedSignersError extends Error {
  override readonly name = 'AllowedSignersError';
  readonly [EXPECTED_ERROR] = true;
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

export interface AllowedSignersSource {
  readonly path: string;
  /** The signers as the file says now; `changed` when its text differs from the previous read. */
  read(): Promise<{ signers: AllowedSigners; changed: boolean }>;
}

export function allowedSignersFile(path: string): AllowedSignersSource {
  let text: string | undefined;
  let parsed: AllowedSigners | undefined;
  return {
    path,
    async read() {
      let now: string;
      try {
        now = await readFile(path, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new AllowedSignersError(`cannot read the allowed signers file ${path} (${code})`, error);
      }
      if (Buffer.byteLength(now) > MAX_ALLOWED_SIGNERS_BYTES)
        throw new AllowedSignersError(`the allowed signers file ${path} is larger than 1 MiB`);
      if (now === text && parsed) return { signers: parsed, changed: false };
      text = now;
      parsed = parseAllowedSigners(now);
      return { signers: parsed, changed: true };
    },
  };
}
