import { describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../../src/git/allowed-signers.ts';
import type { SignedCommit } from '../../../src/git/commit-signature.ts';
import { verifyCommit } from '../../../src/git/commit-verdict.ts';
import { parseSshSignature, verifySshSignature } from '../../../src/git/sshsig.ts';
import { type KeyType, makeKey, signerLine, sshSign } from '../../support/git/ssh-signing.ts';

const PAYLOAD =
  'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\nhello\n';
const NOW = 1_700_000_100_000;

function commit(signature: string | undefined, payload = PAYLOAD): SignedCommit {
  return {
    oid: '1'.repeat(40),
    signature,
    payload: Buffer.from(payload),
    committedAt: 1_700_000_000,
    committer: 'A <a@example.com>',
    parents: [],
  };
}

describe('sshsig made by ssh-keygen', () => {
  for (const type of ['ed25519', 'ecdsa', 'rsa'] as KeyType[]) {
    it(`verifies a ${type} signature, and not one of a tampered payload`, () => {
      const key = makeKey(type);
      const sig = parseSshSignature(sshSign(key, PAYLOAD));
      expect(sig.namespace).toBe('git');
      expect(verifySshSignature(sig, Buffer.from(PAYLOAD))).toBe(true);
      expect(verifySshSignature(sig, Buffer.from(PAYLOAD.replace('hello', 'hellO')))).toBe(false);
    });
  }
});

describe('a commit against the allowed signers', () => {
  const alice = makeKey('ed25519', 'alice');
  const mallory = makeKey('ed25519', 'mallory');
  const allowed = (options = '') =>
    parseAllowedSigners(`# team\n${signerLine('alice@example.com', alice, options)}\n`);

  it('is accepted when signed by an allowed key, naming its principals', () => {
    expect(verifyCommit(commit(sshSign(alice, PAYLOAD)), allowed('namespaces="git"'), NOW)).toEqual({
      ok: true,
      principals: ['alice@example.com'],
      keyType: 'ssh-ed25519',
    });
  });

  it('is refused: unsigned, OpenPGP, tampered, wrong namespace, unknown key', () => {
    const problem = (c: SignedCommit) => {
      const v = verifyCommit(c, allowed(), NOW);
      return v.ok ? 'ok' : v.problem;
    };
    expect(problem(commit(undefined))).toBe('unsigned');
    expect(problem(commit('-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----'))).toBe(
      'openpgp',
    );
    expect(problem(commit(sshSign(alice, PAYLOAD), PAYLOAD.replace('hello', 'evil!')))).toBe('bad-signature');
    expect(problem(commit(sshSign(alice, PAYLOAD, 'file')))).toBe('wrong-namespace');
    expect(problem(commit(sshSign(mallory, PAYLOAD)))).toBe('unknown-key');
  });

  it('is refused when the line does not allow the git namespace', () => {
    const v = verifyCommit(commit(sshSign(alice, PAYLOAD)), allowed('namespaces="file"'), NOW);
    expect(v).toMatchObject({ ok: false, problem: 'unknown-key' });
  });

  it('is refused after valid-before, at the commit date or at the clock, and before valid-after', () => {
    const signed = commit(sshSign(alice, PAYLOAD));
    // 2023-11-14 22:13:20Z is the commit's date
    expect(verifyCommit(signed, allowed('valid-before="20231101Z"'), NOW)).toMatchObject({
      problem: 'expired',
    });
    expect(verifyCommit(signed, allowed('valid-before="20231201Z"'), Date.UTC(2024, 0, 1))).toMatchObject({
      problem: 'expired',
    });
    expect(verifyCommit(signed, allowed('valid-before="20231201Z"'), NOW).ok).toBe(true);
    expect(verifyCommit(signed, allowed('valid-after="20231201Z"'), NOW)).toMatchObject({
      problem: 'not-yet-valid',
    });
  });

  it('reports the lines it cannot use instead of guessing', () => {
    const parsed = parseAllowedSigners(
      `${signerLine('a@example.com', alice, 'cert-authority')}\n${signerLine('b@example.com', alice, 'bogus="1"')}\nnot a line\n`,
    );
    expect(parsed.signers).toEqual([]);
    expect(parsed.problems).toHaveLength(3);
  });

  it('calls a hostile signature malformed, never throws: a P-256 point off the curve, truncated blobs', () => {
    const wire = (...parts: (string | Buffer)[]) =>
      Buffer.concat(
        parts.map((p) => {
          const b = typeof p === 'string' ? Buffer.from(p) : p;
          const n = Buffer.alloc(4);
          n.writeUInt32BE(b.length);
          return Buffer.concat([n, b]);
        }),
      );
    const offCurve = wire(
      'ecdsa-sha2-nistp256',
      'nistp256',
      Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]),
    );
    const blob = (key: Buffer, sig: Buffer) =>
      Buffer.concat([Buffer.from('SSHSIG'), Buffer.from([0, 0, 0, 1]), wire(key, 'git', '', 'sha512', sig)]);
    const armor = (b: Buffer) =>
      `-----BEGIN SSH SIGNATURE-----\n${b.toString('base64')}\n-----END SSH SIGNATURE-----`;
    const sig = wire('ecdsa-sha2-nistp256', wire(Buffer.alloc(33, 1), Buffer.alloc(32, 1)));
    for (const armored of [
      armor(blob(offCurve, sig)),
      armor(blob(offCurve, sig).subarray(0, 30)),
      armor(Buffer.from('SSHSIG')),
    ]) {
      const verdict = verifyCommit(commit(armored), allowed(), NOW);
      expect(verdict).toMatchObject({ ok: false, problem: 'malformed' });
    }
  });
});
