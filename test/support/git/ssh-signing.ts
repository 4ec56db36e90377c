/**
 * Real SSH keys and signatures for tests: keys made by ssh-keygen, data signed by
 * `ssh-keygen -Y sign`, commits signed by `git commit -S` with gpg.format=ssh. Nothing mocked.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestKey {
  /** Path of the private key (its .pub beside it). */
  path: string;
  /** The public key line, "ssh-ed25519 AAAA… comment". */
  publicKey: string;
}

export type KeyType = 'ed25519' | 'ecdsa' | 'rsa';

/** A fresh key pair without a passphrase in a temporary directory. */
export function makeKey(type: KeyType = 'ed25519', name = 'key'): TestKey {
  const dir = mkdtempSync(join(tmpdir(), 'janus-ssh-'));
  const path = join(dir, name);
  const bits = type === 'rsa' ? ['-b', '3072'] : type === 'ecdsa' ? ['-b', '256'] : [];
  execFileSync('ssh-keygen', ['-q', '-t', type, ...bits, '-N', '', '-C', name, '-f', path]);
  return { path, publicKey: readFileSync(`${path}.pub`, 'utf8').trim() };
}

/** An allowed-signers line for `key`: `principal [options] keytype key`. */
export function signerLine(principal: string, key: TestKey, options = ''): string {
  const [type, base64] = key.publicKey.split(' ');
  return [principal, options, type, base64].filter((p) => p !== '').join(' ');
}

/** Signs `data` with ssh-keygen in sshsig `namespace`; returns the armored signature. */
export function sshSign(key: TestKey, data: Buffer | string, namespace = 'git'): string {
  const dir = mkdtempSync(join(tmpdir(), 'janus-sig-'));
  const file = join(dir, 'data');
  writeFileSync(file, data);
  execFileSync('ssh-keygen', ['-q', '-Y', 'sign', '-f', key.path, '-n', namespace, file], {
    stdio: 'ignore',
  });
  return readFileSync(`${file}.sig`, 'utf8');
}

/** `git commit` options that sign with `key` (SSH format); none when `key` is undefined. */
export function signingConfig(key: TestKey | undefined): string[] {
  if (!key) return [];
  return ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key.path}`, '-c', 'commit.gpgsign=true'];
}
