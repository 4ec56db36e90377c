/**
 * A commit's checkout for a render, written from Janus's object store: private, within its
 * bounds, no symlink and no submodule ever written, removed by remove() and when it fails.
 */
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { checkoutCommit } from '../../../src/render/checkout.ts';
import { CHECKOUT_LIMITS } from '../../../src/render/limits.ts';
import { RenderInputError } from '../../../src/render/render-error.ts';
import { git } from '../../support/git/git-server.ts';
import { sourceRepository } from '../../support/git/source-repo.ts';

async function checkoutWith(repoDir: string, commit: string, limits = CHECKOUT_LIMITS) {
  const store = new ObjectStore(join(repoDir, '.git'));
  try {
    return await checkoutCommit(store, commit, limits);
  } finally {
    await store.close();
  }
}

/** The error checkoutWith threw, and that it left nothing behind in a temporary folder of its own. */
async function refusal(repoDir: string, commit: string, limits = CHECKOUT_LIMITS): Promise<RenderInputError> {
  const tmp = await mkdtemp(join(tmpdir(), 'janus-checkout-tmp-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    const error = await checkoutWith(repoDir, commit, limits).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RenderInputError);
    expect(await readdir(tmp)).toEqual([]);
    return error as RenderInputError;
  } finally {
    process.env.TMPDIR = saved;
    await rm(tmp, { recursive: true, force: true });
  }
}

describe('the checkout of a commit', () => {
  it('writes its files, private and not executable, beside a private home, and remove() deletes both', async () => {
    const repo = await sourceRepository();
    const commit = await repo.commit({
      'a/b/c.yaml': 'c\n',
      'run.sh': '#!/bin/sh\n',
      'link.yaml': { symlink: 'a/b/c.yaml' },
    });
    await git(repo.dir, 'update-index', '--chmod=+x', 'run.sh');
    await git(repo.dir, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '-m', 'exec');
    const executable = (await git(repo.dir, 'rev-parse', 'HEAD')).trim();
    expect(executable).not.toBe(commit);
    const checkout = await checkoutWith(repo.dir, executable);
    try {
      expect(await readFile(join(checkout.root, 'a/b/c.yaml'), 'utf8')).toBe('c\n');
      const link = await lstat(join(checkout.root, 'link.yaml'));
      expect(link.isSymbolicLink()).toBe(false);
      expect(await readFile(join(checkout.root, 'link.yaml'), 'utf8')).toBe('c\n');
      expect((await lstat(join(checkout.root, 'run.sh'))).mode & 0o777).toBe(0o600);
      expect((await lstat(join(checkout.root, 'a'))).mode & 0o777).toBe(0o700);
      expect((await lstat(dirname(checkout.root))).mode & 0o777).toBe(0o700);
      expect(await readdir(checkout.home)).toEqual([]);
    } finally {
      await checkout.remove();
    }
    expect(existsSync(dirname(checkout.root))).toBe(false);
  });

  it('refuses a commit over its bounds: files and folders, bytes, bytes of one file', async () => {
    const repo = await sourceRepository();
    const commit = await repo.commit({ 'a/1': '1', 'a/2': '22', 'b/3': '333', big: 'x'.repeat(100) });
    expect((await refusal(repo.dir, commit, { ...CHECKOUT_LIMITS, maxEntries: 5 })).message).toMatch(
      /more than the 5 files and folders a render may write/,
    );
    expect((await refusal(repo.dir, commit, { ...CHECKOUT_LIMITS, maxBytes: 50 })).message).toMatch(
      /more than the 50 bytes a render may write/,
    );
    const tooLarge = await refusal(repo.dir, commit, { ...CHECKOUT_LIMITS, maxFileBytes: 99 });
    expect(tooLarge).toMatchObject({
      file: 'big',
      message: 'big is 100 bytes, more than the 99 bytes a file of a render may have',
    });
  });

  it('refuses a submodule, and symlinks out of the checkout, to a folder, to nothing, or in a loop', async () => {
    const repo = await sourceRepository();
    const base = await repo.commit({ 'a.yaml': 'a' });
    await git(repo.dir, 'update-index', '--add', '--cacheinfo', `160000,${base},vendor/lib`);
    await git(repo.dir, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '-m', 'submodule');
    const submodule = (await git(repo.dir, 'rev-parse', 'HEAD')).trim();
    expect(await refusal(repo.dir, submodule)).toMatchObject({
      file: 'vendor/lib',
      message: expect.stringContaining('a submodule'),
    });
    for (const [files, why] of [
      [{ 'x/l': { symlink: '/etc/passwd' } }, 'outside the checkout'],
      [{ 'x/l': { symlink: '../..' } }, 'outside the checkout'],
      [{ 'x/l': { symlink: '../x' } }, 'a folder'],
      [{ 'x/l': { symlink: 'missing' } }, 'no file of the commit'],
      [{ 'x/l': { symlink: 'm' }, 'x/m': { symlink: 'l' } }, 'through more than 8 other links'],
    ] as const) {
      const commit = await repo.commit(files);
      const error = await refusal(repo.dir, commit);
      expect(error.message, JSON.stringify(files)).toContain(why);
      expect(error.file).toMatch(/^x\/[lm]$/);
    }
  });
});
