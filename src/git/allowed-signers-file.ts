/**
 * The allowed-signers file as a mounted Secret or ConfigMap: read at every poll (a few KiB) and
 * parsed again only when its text changed, so an edit takes effect at the next poll without a
 * restart, as the Git token file does. A file that cannot be read fails the poll: with signature
 * verification on, nothing is applied without knowing who may sign.
 */
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { type AllowedSigners, parseAllowedSigners } from './allowed-signers.ts';
import { rereadFile } from './reread-file.ts';

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
  const file = rereadFile(path, {
    what: 'the allowed signers file',
    maxBytes: MAX_ALLOWED_SIGNERS_BYTES,
    parse: parseAllowedSigners,
    refuse: (message, cause) => new AllowedSignersError(message, cause),
  });
  return {
    path,
    async read() {
      const { value, changed } = await file.read();
      return { signers: value, changed };
    },
  };
}
