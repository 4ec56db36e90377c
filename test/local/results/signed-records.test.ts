/**
 * Signed results commits, as commitRecords writes them with a key from ssh-keygen: accepted by
 * the real `git verify-commit` and by our own verifier, signed anew when replayed onto another
 * tip, and marked by `janus history --verify`'s check: verified, unsigned, unknown key, bad signature.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../../src/git/allowed-signers.ts';
import { GitRepository } from '../../../src/git/index.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { commitSigner } from '../../../src/git/signing-key-file.ts';
import { parseSshPrivateKey } from '../../../src/git/ssh-private-key.ts';
import { auditBranch } from '../../../src/results/branch-audit.ts';
import { commitRecords } from '../../../src/results/commit-records.ts';
import { verifyRecord } from '../../../src/results/record-signature.ts';
import {
  type KeyType,
  makeKey,
  signerLine,
  signingConfig,
  type TestKey,
} from '../../support/git/ssh-signing.ts';

const WHO = { name: 'Janus', email: 'janus@tx.janus.io', timestamp: 1_795_000_000, timezoneOffset: 0 };
const RECORDS = [
  { files: { 'results/shop/a.yaml': 'phase: Committed\n' }, message: 'shop/a: Committed\n', id: 'r-1' },
  { files: {}, message: 'shop/b: edit ignored\n', id: 'r-2' },
  { files: { 'results/shop/c.yaml': 'phase: RolledBack\n' }, message: 'shop/c: RolledBack\n', id: 'r-3' },
];

function bareRepository(): { store: ObjectStore; git: (...args: string[]) => string } {
  const gitdir = mkdtempSync(join(tmpdir(), 'janus-results-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', gitdir, ...args], {
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
    }).trim();
  git('init', '--quiet', '--bare');
  return { store: new ObjectStore(gitdir), git };
}

function allowedSignersFile(key: TestKey): string {
  const file = join(mkdtempSync(join(tmpdir(), 'janus-allowed-')), 'allowed_signers');
  writeFileSync(file, `${signerLine('janus@tx.janus.io', key, 'namespaces="git"')}\n`);
  return file;
}

const signer = (key: TestKey) => commitSigner(parseSshPrivateKey(readFileSync(key.path, 'utf8')));

describe('results commits signed with an SSH key', () => {
  for (const type of ['ed25519', 'ecdsa', 'rsa'] as KeyType[]) {
    it(`are accepted by git verify-commit (${type})`, async () => {
      const key = makeKey(type, 'janus');
      const { store, git } = bareRepository();
      const tip = (await commitRecords(store, undefined, RECORDS, WHO, new Set(), signer(key))).tip;
      const commits = git('rev-list', tip ?? '').split('\n');
      expect(commits).toHaveLength(3);
      const allowed = allowedSignersFile(key);
      for (const oid of commits) {
        const out = execFileSync(
          'git',
          ['--git-dir', store.gitdir, '-c', `gpg.ssh.allowedSignersFile=${allowed}`, 'verify-commit', oid],
          { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] },
        );
        expect(out).toBe('');
      }
      const shown = execFileSync(
        'git',
        [
          '--git-dir',
          store.gitdir,
          '-c',
          `gpg.ssh.allowedSignersFile=${allowed}`,
          'log',
          '--format=%G? %GS',
          tip ?? '',
        ],
        { encoding: 'utf8' },
      );
      expect(shown.trim().split('\n')).toEqual(Array(3).fill('G janus@tx.janus.io'));
    });
  }

  it('without a key, are the commits they always were (same ids)', async () => {
    const key = makeKey('ed25519');
    const { store } = bareRepository();
    const unsigned = (await commitRecords(store, undefined, RECORDS, WHO)).tip;
    const again = (await commitRecords(store, undefined, RECORDS, WHO, new Set(), undefined)).tip;
    const signed = (await commitRecords(store, undefined, RECORDS, WHO, new Set(), signer(key))).tip;
    expect(again).toBe(unsigned);
    expect(signed).not.toBe(unsigned);
    // The signed commit without its gpgsig header is the unsigned one.
    expect((await store.readCommit(signed ?? '')).message).toBe(
      (await store.readCommit(unsigned ?? '')).message,
    );
  });

  it('replayed onto a tip someone else moved, are new commits, signed again', async () => {
    const key = makeKey('ed25519');
    const { store, git } = bareRepository();
    const before = (await commitRecords(store, undefined, RECORDS.slice(0, 1), WHO, new Set(), signer(key)))
      .tip;
    const theirs = (await commitRecords(store, before, RECORDS.slice(1, 2), { ...WHO, name: 'Other' })).tip;
    const replayed = (await commitRecords(store, theirs, RECORDS.slice(2), WHO, new Set(), signer(key))).tip;
    expect(git('rev-parse', `${replayed}^`)).toBe(theirs);
    const allowed = parseAllowedSigners(`${signerLine('janus@tx.janus.io', key)}\n`);
    expect(await verifyRecord(store, replayed ?? '', allowed, Date.now())).toEqual({
      status: 'verified',
      detail: 'janus@tx.janus.io',
    });
  });
});

describe('verifyRecord (janus history --verify)', () => {
  it('marks a record verified, unsigned, signed by an unknown key, or with a bad signature', async () => {
    const janus = makeKey('ed25519', 'janus');
    const other = makeKey('ed25519', 'other');
    const { store, git } = bareRepository();
    const allowed = parseAllowedSigners(`${signerLine('janus@tx.janus.io', janus)}\n`);
    const mark = async (oid: string | undefined) =>
      (await verifyRecord(store, oid ?? '', allowed, Date.now())).status;

    const signed = (await commitRecords(store, undefined, RECORDS.slice(0, 1), WHO, new Set(), signer(janus)))
      .tip;
    const unsigned = (await commitRecords(store, signed, RECORDS.slice(1, 2), WHO)).tip;
    const foreign = (await commitRecords(store, unsigned, RECORDS.slice(2), WHO, new Set(), signer(other)))
      .tip;
    // Janus's signature copied onto a record it never wrote: its message changed.
    const raw = git('cat-file', 'commit', signed ?? '');
    const forged = execFileSync(
      'git',
      ['--git-dir', store.gitdir, 'hash-object', '-t', 'commit', '-w', '--stdin'],
      {
        input: `${raw.replace('shop/a: Committed', 'shop/a: RolledBack')}\n`,
        encoding: 'utf8',
      },
    ).trim();

    expect(await mark(signed)).toBe('verified');
    expect(await mark(unsigned)).toBe('unsigned');
    expect(await mark(foreign)).toBe('unknown key');
    expect(await mark(forged)).toBe('bad signature');
    // A commit past the 64 KiB a signed commit may take is not read, and does not stop the audit.
    const huge = execFileSync(
      'git',
      ['--git-dir', store.gitdir, 'hash-object', '-t', 'commit', '-w', '--stdin'],
      {
        input: `${raw}\n${'x'.repeat(70 * 1024)}\n`,
        encoding: 'utf8',
      },
    ).trim();
    expect(await verifyRecord(store, huge, allowed, Date.now())).toEqual({
      status: 'bad signature',
      detail: 'the commit is larger than 64 KiB: not verified',
    });
  });
});

describe('auditBranch (janus history --verify): every commit of the branch, through every parent', () => {
  const janus = makeKey('ed25519', 'janus');
  const allowed = parseAllowedSigners(`${signerLine('janus@tx.janus.io', janus)}\n`);

  /** A clone-like repository whose branch janus/results is `tip`, audited as janus history does. */
  async function audit(gitdir: string, tip: string, options: Parameters<typeof auditBranch>[4] = {}) {
    execFileSync('git', ['--git-dir', gitdir, 'update-ref', 'refs/heads/janus/results', tip]);
    const repository = await GitRepository.open({
      location: gitdir.replace(/\/\.git$/, ''),
      cacheDir: mkdtempSync(join(tmpdir(), 'janus-cache-')),
    });
    return repository.run(async (session) => {
      const fetched = await session.fetch('janus/results');
      return auditBranch(session, 'janus/results', fetched ?? '', allowed, options);
    });
  }

  function workTree(): { gitdir: string; store: ObjectStore; git: (...args: string[]) => string } {
    const dir = mkdtempSync(join(tmpdir(), 'janus-results-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim();
    git('init', '--quiet');
    return { gitdir: join(dir, '.git'), store: new ObjectStore(join(dir, '.git')), git };
  }

  it('finds an unsigned commit without trailers that rewrote a result file, under a signed record', async () => {
    const { gitdir, store } = workTree();
    const first = (await commitRecords(store, undefined, RECORDS.slice(0, 1), WHO, new Set(), signer(janus)))
      .tip;
    // A results-branch pusher's commit: no trailers, not a record, rewrites shop/a's outcome.
    const tidy = { files: { 'results/shop/a.yaml': 'phase: RolledBack\n' }, message: 'tidy up\n' };
    const planted = (await commitRecords(store, first, [tidy], { ...WHO, name: 'Janus' })).tip ?? '';
    const next = (await commitRecords(store, planted, RECORDS.slice(2), WHO, new Set(), signer(janus))).tip;

    const found = await audit(gitdir, next ?? '');
    expect(found).toMatchObject({ checked: 3, unverifiedCount: 1 });
    expect(found.unverified).toEqual([
      { commit: planted, signature: { status: 'unsigned', detail: expect.any(String) } },
    ]);
    expect(found.incomplete).toBeUndefined();

    // --verify-after the planted commit: only what came after it is checked, and verifies.
    expect(await audit(gitdir, next ?? '', { after: planted.slice(0, 9) })).toMatchObject({
      checked: 1,
      unverifiedCount: 0,
    });
    expect(await audit(gitdir, next ?? '', { after: 'abcdef0' })).toMatchObject({
      checked: 3,
      unverifiedCount: 1,
      afterNotFound: true,
    });
    // A bound on the walk is said, not passed over.
    expect((await audit(gitdir, next ?? '', { maxCommits: 2 })).incomplete).toMatch(/^more than 2 commits/);
  });

  it("walks a merge's second parent: a commit reached only through it is checked", async () => {
    const { gitdir, store, git } = workTree();
    const first = (await commitRecords(store, undefined, RECORDS.slice(0, 1), WHO, new Set(), signer(janus)))
      .tip;
    const main =
      (await commitRecords(store, first, RECORDS.slice(2), WHO, new Set(), signer(janus))).tip ?? '';
    const side =
      (
        await commitRecords(
          store,
          first,
          [{ files: { 'results/shop/z.yaml': 'x\n' }, message: 'side\n' }],
          WHO,
        )
      ).tip ?? '';
    // Signed with the allowed key, so only its second parent's history can give it away.
    const merge = execFileSync(
      'git',
      [
        '-C',
        gitdir.replace(/\/\.git$/, ''),
        ...signingConfig(janus),
        'commit-tree',
        '-S',
        '-p',
        main,
        '-p',
        side,
        '-m',
        'merge',
        git('rev-parse', `${main}^{tree}`),
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 'J',
          GIT_AUTHOR_EMAIL: 'j@x',
          GIT_COMMITTER_NAME: 'J',
          GIT_COMMITTER_EMAIL: 'j@x',
        },
      },
    ).trim();
    expect(await verifyRecord(store, merge, allowed, Date.now())).toMatchObject({ status: 'verified' });

    const found = await audit(gitdir, merge);
    expect(found).toMatchObject({ checked: 4, unverifiedCount: 1 });
    expect(found.unverified.map((u) => u.commit)).toEqual([side]);
  });
});
