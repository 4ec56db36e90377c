/**
 * The real `sops` for the tests: built from its pinned Go module by test/kube-testenv/build-sops.sh
 * (cached; the first call in a fresh cache builds it), run on files in a temporary folder with
 * age recipients the test made. The tests encrypt with sops itself, never with Janus's reader.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { builtBinaries } from './cached-build.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('../../kube-testenv/build-sops.sh', import.meta.url));

let binDir: string | undefined;

/** The folder holding `sops`: the script builds it once, then answers from its cache. */
export function sopsBinaries(): string {
  binDir ??= builtBinaries(BUILD_SCRIPT, process.env.JANUS_SOPS_BIN);
  return binDir;
}

export interface AgeKey {
  /** AGE-SECRET-KEY-1… */
  identity: string;
  /** age1… */
  recipient: string;
}

export async function newAgeKey(): Promise<AgeKey> {
  const identity = await generateIdentity();
  return { identity, recipient: await identityToRecipient(identity) };
}

/** A file extension, which tells sops the format. */
export type SopsFileFormat = 'yaml' | 'json' | 'env' | 'ini' | 'bin';

export interface EncryptOptions {
  recipients: readonly string[];
  /** sops's selection flags, e.g. ['--encrypted-regex', '^(data|stringData)$']. */
  flags?: readonly string[];
  /** The file's extension tells sops the format: yaml (default), json, env (dotenv), ini, anything else binary. */
  format?: SopsFileFormat;
  /** A .sops.yaml (creation_rules) for what has no flag, e.g. mac_only_encrypted. */
  config?: string;
}

/** `sops encrypt --age …` of `plaintext`: the encrypted file's text. */
export function sopsEncrypt(plaintext: string, options: EncryptOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'janus-sops-'));
  try {
    const file = join(dir, `plain.${options.format ?? 'yaml'}`);
    writeFileSync(file, plaintext);
    const config = join(dir, '.sops.yaml');
    if (options.config !== undefined) writeFileSync(config, options.config);
    return execFileSync(
      join(sopsBinaries(), 'sops'),
      [
        ...(options.config !== undefined ? ['--config', config] : []),
        'encrypt',
        ...(options.recipients.length > 0 ? ['--age', options.recipients.join(',')] : []),
        ...(options.flags ?? []),
        file,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: sopsEnv(dir) },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `sops decrypt` with `identity`: what sops itself reads back (to compare Janus's reader with). */
export function sopsDecrypt(encrypted: string, identity: string, format: SopsFileFormat = 'yaml'): string {
  const dir = mkdtempSync(join(tmpdir(), 'janus-sops-'));
  try {
    const file = join(dir, `secret.${format}`);
    writeFileSync(file, encrypted);
    return execFileSync(join(sopsBinaries(), 'sops'), ['decrypt', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...sopsEnv(dir), SOPS_AGE_KEY: identity },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** No config file found by walking up, no keys of the machine's user, no update check. */
function sopsEnv(dir: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: dir, SOPS_DISABLE_VERSION_CHECK: '1' };
}
