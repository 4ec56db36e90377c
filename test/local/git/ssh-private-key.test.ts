/**
 * The results signer: OpenSSH private keys made by the real ssh-keygen, read into node:crypto,
 * and sshsig signatures made with them that the real `ssh-keygen -Y verify` and sshsig.ts accept.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SigningKeyError, signingKeyFile } from '../../../src/git/signing-key-file.ts';
import { parseSshPrivateKey } from '../../../src/git/ssh-private-key.ts';
import { signSsh } from '../../../src/git/ssh-signer.ts';
import { SshFormatError } from '../../../src/git/ssh-wire.ts';
import { parseSshSignature, verifySshSignature } from '../../../src/git/sshsig.ts';
import { type KeyType, makeKey, signerLine, sshSign, type TestKey } from '../../support/git/ssh-signing.ts';

const MESSAGE = Buffer.from('tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nresult\n');

/** `ssh-keygen -Y verify`'s verdict on `signature` of MESSAGE by `key`, in namespace git. */
function verifiesWithSshKeygen(key: TestKey, signature: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'janus-verify-'));
  writeFileSync(join(dir, 'allowed'), `${signerLine('janus@example.com', key)}\n`);
  writeFileSync(join(dir, 'sig'), signature);
  const args = ['-Y', 'verify', '-f', join(dir, 'allowed'), '-I', 'janus@example.com', '-n', 'git'];
  try {
    execFileSync('ssh-keygen', [...args, '-s', join(dir, 'sig')], {
      input: MESSAGE,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    return true;
  } catch {
    return false;
  }
}

describe('an OpenSSH private key made by ssh-keygen', () => {
  for (const type of ['ed25519', 'ecdsa', 'rsa'] as KeyType[]) {
    it(`reads a ${type} key and signs what ssh-keygen -Y verify and sshsig.ts accept`, () => {
      const made = makeKey(type, 'janus-results');
      const key = parseSshPrivateKey(readFileSync(made.path, 'utf8'));
      expect(`${key.publicKey.type} ${key.publicKey.blob.toString('base64')} janus-results`).toBe(
        made.publicKey,
      );
      expect(key.comment).toBe('janus-results');
      const armored = signSsh(key, 'git', MESSAGE);
      expect(verifiesWithSshKeygen(made, armored)).toBe(true);
      const parsed = parseSshSignature(armored);
      expect(parsed.namespace).toBe('git');
      expect(verifySshSignature(parsed, MESSAGE)).toBe(true);
      expect(verifySshSignature(parsed, Buffer.from('tampered'))).toBe(false);
    });
  }

  it('signs ed25519 byte for byte as ssh-keygen -Y sign does', () => {
    const made = makeKey('ed25519');
    const key = parseSshPrivateKey(readFileSync(made.path, 'utf8'));
    expect(signSsh(key, 'git', MESSAGE)).toBe(sshSign(made, MESSAGE));
  });

  it('refuses a key under a passphrase, saying so, and what is not an OpenSSH key', () => {
    const made = makeKey('ed25519');
    execFileSync('ssh-keygen', ['-q', '-p', '-N', 'secret', '-f', made.path]);
    expect(() => parseSshPrivateKey(readFileSync(made.path, 'utf8'))).toThrow(
      /the key is encrypted with a passphrase \(aes256-ctr\); Janus needs it unencrypted/,
    );
    const pem = makeKey('ecdsa');
    execFileSync('ssh-keygen', ['-q', '-p', '-N', '', '-m', 'PEM', '-f', pem.path]);
    expect(() => parseSshPrivateKey(readFileSync(pem.path, 'utf8'))).toThrow(/not in OpenSSH format/);
    expect(() => parseSshPrivateKey(made.publicKey)).toThrow(SshFormatError);
    const text = readFileSync(makeKey('ed25519').path, 'utf8');
    expect(() => parseSshPrivateKey(text.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'))).toThrow(
      SshFormatError,
    );
  });
});

describe('the signing key file', () => {
  it('is read again when it changes (a rotated Secret), and a missing or encrypted key is a SigningKeyError', async () => {
    const first = makeKey('ed25519', 'first');
    const second = makeKey('ed25519', 'second');
    const path = join(mkdtempSync(join(tmpdir(), 'janus-key-')), 'ssh-privatekey');
    const source = signingKeyFile(path);
    await expect(source.read()).rejects.toThrow(SigningKeyError);
    await writeFile(path, readFileSync(first.path));
    expect((await source.read()).key.comment).toBe('first');
    expect((await source.read()).changed).toBe(false);
    // As the kubelet swaps a Secret's files: a new file renamed over the old one.
    await writeFile(`${path}.new`, readFileSync(second.path));
    await rename(`${path}.new`, path);
    expect(await source.read()).toMatchObject({ changed: true, key: { comment: 'second' } });
    execFileSync('ssh-keygen', ['-q', '-p', '-N', 'secret', '-f', second.path]);
    await writeFile(path, readFileSync(second.path));
    await expect(source.read()).rejects.toThrow(/the results signing key .*encrypted with a passphrase/);
  });
});
