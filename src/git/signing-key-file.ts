/**
 * The key results commits are signed with, as a mounted Secret: read before each push and parsed
 * again only when its text changed, so a rotated key signs from the next push on without a
 * restart, as the Git token file is re-read. A key that cannot be read or parsed fails the push:
 * the results stay queued and are retried (never pushed unsigned while signing is configured).
 */
import { readFile } from 'node:fs/promises';
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { GIT_SIGNATURE_NAMESPACE } from './commit-verdict.ts';
import type { CommitSigner } from './object-batch.ts';
import { parseSshPrivateKey, type SshPrivateKey } from './ssh-private-key.ts';
import { signSsh } from './ssh-signer.ts';

/** The key file is missing, unreadable, encrypted or not an OpenSSH key: nothing is signed with it. */
export class SigningKeyError extends Error {
  override readonly name = 'SigningKeyError';
  readonly [EXPECTED_ERROR] = true;
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

export interface SigningKeySource {
  readonly path: string;
  /** The key as the file holds it now; `changed` when its text differs from the previous read. */
  read(): Promise<{ key: SshPrivateKey; changed: boolean }>;
}

export function signingKeyFile(path: string): SigningKeySource {
  let text: string | undefined;
  let parsed: SshPrivateKey | undefined;
  return {
    path,
    async read() {
      let now: string;
      try {
        now = await readFile(path, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new SigningKeyError(`cannot read the results signing key ${path} (${code})`, error);
      }
      if (now === text && parsed) return { key: parsed, changed: false };
      try {
        parsed = parseSshPrivateKey(now);
      } catch (error) {
        throw new SigningKeyError(`the results signing key ${path}: ${(error as Error).message}`, error);
      }
      text = now;
      return { key: parsed, changed: true };
    },
  };
}

/** Signs commits as `git commit -S` with gpg.format=ssh does: sshsig in namespace "git". */
export function commitSigner(key: SshPrivateKey): CommitSigner {
  return (payload) => signSsh(key, GIT_SIGNATURE_NAMESPACE, payload);
}
