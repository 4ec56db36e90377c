/**
 * Indexing a fetched pack (src/git/pack-indexer.ts) against git's own index-pack: the same
 * .idx, byte for byte, for packs whose deltas point back by offset and by object id.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexPack } from '../../../src/git/pack-indexer.ts';
import { ProtocolError } from '../../../src/git/receive-pack-protocol.ts';
import { git } from '../../support/git/git-server.ts';
import { gitWithInput } from '../../support/git/hostile-git.ts';

const MiB = 1024 * 1024;
const LIMITS = {
  maxObjects: 10_000,
  maxObjectBytes: 64 * MiB,
  maxDeltaBytes: 64 * MiB,
  maxHeldBytes: 128 * MiB,
  maxInflatedBytes: 1024 * MiB,
};

let scratch: string;
let work: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-pack-indexer-'));
  work = join(scratch, 'r');
  await git(scratch, 'init', '--quiet', work);
  // Thirty versions of three files that differ a little each time: deltas on deltas.
  for (let i = 1; i <= 30; i++) {
    for (const f of ['a', 'b', 'c']) {
      const lines = Array.from({ length: 200 + i }, (_, n) => `line ${n} of ${f} at ${i}`);
      await writeFile(join(work, `${f}.txt`), `${lines.join('\n')}\n`);
    }
    // A file over the 4 MiB hashed as it inflates; its second version, a delta on it.
    if (i <= 2) await writeFile(join(work, 'big.txt'), `${i}\n${'0123456789abcdef\n'.repeat(400_000)}`);
    await git(work, 'add', '-A');
    await git(
      work,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.com',
      'commit',
      '--quiet',
      '-m',
      `v${i}`,
    );
  }
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A pack of every object, and the index git writes for it. */
async function gitPack(...packArgs: string[]): Promise<{ pack: Buffer; idx: Buffer }> {
  const objects = await git(work, 'rev-list', '--objects', '--all');
  const out = join(scratch, `p${packArgs.join('')}`);
  await gitWithInput(
    work,
    `${objects}\n`,
    'pack-objects',
    '-q',
    '--window=250',
    '--depth=50',
    ...packArgs,
    out,
  );
  const name = (await readdir(scratch)).find(
    (f) => f.startsWith(out.slice(scratch.length + 1)) && f.endsWith('.pack'),
  );
  const base = join(scratch, (name ?? '').replace(/\.pack$/, ''));
  return { pack: await readFile(`${base}.pack`), idx: await readFile(`${base}.idx`) };
}

describe('indexing a fetched pack', () => {
  it.each([
    ['by offset', ['--delta-base-offset']],
    ['by object id', []],
  ])('writes the index git writes, for deltas on their bases %s', async (_, args) => {
    const { pack, idx } = await gitPack(...args);
    const indexed = await indexPack(pack, LIMITS);
    expect(indexed.objects).toBe(pack.readUInt32BE(8));
    expect(indexed.checksum).toBe(pack.subarray(-20).toString('hex'));
    expect(indexed.idx.equals(idx)).toBe(true);
  });

  it('refuses a thin pack: a delta whose base is not in it', async () => {
    // The second commit's objects, its big.txt a delta on the first's, which the pack leaves out.
    const thin = spawnSync('git', ['pack-objects', '-q', '--thin', '--stdout', '--revs'], {
      cwd: work,
      input: 'HEAD~28\n^HEAD~29\n',
    });
    await expect(indexPack(thin.stdout, LIMITS)).rejects.toThrow(
      /the base [0-9a-f]{40} of the delta at offset \d+ is not in the pack/,
    );
  });

  it('refuses a pack cut short, one altered, and one whose object claims too many bytes', async () => {
    const { pack } = await gitPack('--delta-base-offset');
    await expect(indexPack(pack.subarray(0, pack.length - 100), LIMITS)).rejects.toThrow(ProtocolError);
    const altered = Buffer.from(pack);
    altered[200] = (altered[200] ?? 0) ^ 0xff;
    await expect(indexPack(altered, LIMITS)).rejects.toThrow(/does not match its checksum/);
    await expect(indexPack(pack, { ...LIMITS, maxObjectBytes: 100 })).rejects.toThrow(
      /holds an object of \d+ bytes \(at offset \d+\); Janus reads objects of at most 100 bytes/,
    );
  });
});
