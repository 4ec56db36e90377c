/**
 * The key results commits are signed with, as a mounted Secret: read before each push and parsed
 * again only when its text changed, so a rotated key signs from the next push on without a
 * restart, as the Git token file is re-read. A key that cannot be read or parsed fails the push:
 * the results stay queued and are retried (never pushed unsigned while signing is configured).
 */
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { GIT_SIGNATURE_NAMESPACE } from './commit-verdict.ts';
import type { CommitSigner } from './object-batch.ts';
import { rereadFile } from './reread-file.ts';
import { MAX_PRIVATE_KEY_CHARS, parseSshPrivateKey, type SshPrivateKey } from './ssh-private-key.ts';
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
  const file = rereadFile(path, {
    what: 'the results signing key',
    maxBytes: MAX_PRIVATE_KEY_CHARS,
    parse: parseSshPrivateKey,
    refuse: (message, cause) => new SigningKeyError(message, cause),
  });
  return {
    path,
    async read() {
      const { value, changed } = await file.read();
      return { key: value, changed };
    },
  };
}

/** Signs commits as `git commit -S` with gpg.format=ssh does: sshsig in namespace "git". */
export function commitSigner(key: SshPrivateKey): CommitSigner {
  return (payload) => signSsh(key, GIT_SIGNATURE_NAMESPACE, payload);
}
