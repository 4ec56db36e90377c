/**
 * What a commit's signature covers, cut from commits made and signed by the real `git commit -S`
 * (gpg.format=ssh, keys from ssh-keygen), and checked against `git verify-commit`'s own verdict.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../../src/git/allowed-signers.ts';
import { splitSignature } from '../../../src/git/commit-signature.ts';
import { verifyCommit } from '../../../src/git/commit-verdict.ts';
import { makeKey, signerLine, signingConfig } from '../../support/git/ssh-signing.ts';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Ann',
  GIT_AUTHOR_EMAIL: 'ann@example.com',
  GIT_COMMITTER_NAME: 'Ann',
  GIT_COMMITTER_EMAIL: 'ann@example.com',
};

function repo(): (...args: string[]) => Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'janus-sign-'));
  const run = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: ENV });
  run('init', '--quiet', '--initial-branch=main');
  writeFileSync(join(dir, 'file'), 'content\n');
  run('add', 'file');
  return run;
}

describe('a commit signed by git with an SSH key', () => {
  const ann = makeKey('ed25519', 'ann');
  const allowedFile = join(mkdtempSync(join(tmpdir(), 'janus-allowed-')), 'allowed_signers');
  writeFileSync(allowedFile, `${signerLine('ann@example.com', ann)}\n`);
  const allowed = parseAllowedSigners(`${signerLine('ann@example.com', ann)}\n`);

  it('verifies as git verify-commit does, in a message encoded in ISO-8859-1 too', () => {
    const git = repo();
    const latin1 = Buffer.from('caf\xe9 cr\xe8me\n', 'latin1');
    const messageFile = join(mkdtempSync(join(tmpdir(), 'janus-msg-')), 'message');
    writeFileSync(messageFile, latin1);
    git(
      '-c',
      'i18n.commitEncoding=ISO-8859-1',
      ...signingConfig(ann),
      'commit',
      '--quiet',
      '-F',
      messageFile,
    );
    git('-c', `gpg.ssh.allowedSignersFile=${allowedFile}`, 'verify-commit', 'HEAD'); // throws if git disagrees
    const commit = splitSignature('x', git('cat-file', 'commit', 'HEAD'));
    expect(commit.signature).toMatch(/^-----BEGIN SSH SIGNATURE-----\n[\s\S]+-----END SSH SIGNATURE-----$/);
    expect(commit.payload.includes(Buffer.from('gpgsig'))).toBe(false);
    expect(commit.payload.includes(latin1)).toBe(true);
    expect(commit.committer).toBe('Ann <ann@example.com>');
    expect(verifyCommit(commit, allowed, Date.now())).toMatchObject({
      ok: true,
      principals: ['ann@example.com'],
    });
  });

  it('does not verify once the commit is rewritten with the signature kept', () => {
    const git = repo();
    git(...signingConfig(ann), 'commit', '--quiet', '-m', 'deploy v2');
    const raw = git('cat-file', 'commit', 'HEAD').toString('latin1').replace('deploy v2', 'deploy v3');
    const verdict = verifyCommit(splitSignature('x', Buffer.from(raw, 'latin1')), allowed, Date.now());
    expect(verdict).toMatchObject({ ok: false, problem: 'bad-signature' });
  });

  it('is unsigned without -S', () => {
    const git = repo();
    git('-c', 'commit.gpgsign=false', 'commit', '--quiet', '-m', 'plain');
    const commit = splitSignature('x', git('cat-file', 'commit', 'HEAD'));
    expect(commit.signature).toBeUndefined();
    expect(verifyCommit(commit, allowed, Date.now())).toMatchObject({ ok: false, problem: 'unsigned' });
  });
});
