import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StatusSpool } from '../../../src/commit-status/spool.ts';
import type { CommitStatus } from '../../../src/commit-status/state.ts';

const rejected: CommitStatus = {
  sha: 'd'.repeat(40),
  context: 'janus/shop/broken',
  state: 'failure',
  description: 'Rejected, nothing applied: transactions/broken/a.yaml:3: bad',
  phase: 'Rejected',
};

describe('the spool of statuses a crash must not lose', () => {
  it('keeps a status until it is removed, across a reopen; the same status twice is one file', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'janus-status-spool-')), 'pending-statuses');
    const spool = await StatusSpool.open(dir);
    await spool.add('shop/broken', rejected);
    await spool.add('shop/broken', rejected);
    expect(await (await StatusSpool.open(dir)).load()).toEqual([{ key: 'shop/broken', status: rejected }]);
    await spool.remove(rejected);
    expect(await (await StatusSpool.open(dir)).load()).toEqual([]);
  });

  it('drops a write that never completed and a file it cannot read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'janus-status-spool-'));
    await writeFile(join(dir, 'a.json.tmp'), '{"key":');
    await writeFile(join(dir, 'b.json'), 'not json');
    await writeFile(join(dir, 'c.json'), JSON.stringify({ key: 'shop/x', status: { sha: 1 } }));
    expect(await (await StatusSpool.open(dir)).load()).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });
});
