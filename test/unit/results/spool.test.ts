import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ResultRecord, ResultSpool } from '../../../src/results/index.ts';

let dir: string;
const record = (n: number) => ({
  files: { [`results/default/t${n}.yaml`]: `n: ${n}\n` },
  message: `default/t${n}: Committed\n`,
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'janus-spool-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** What a record says, without the id the spool gives it. */
const content = (e: { record: ResultRecord }) => ({ files: e.record.files, message: e.record.message });

describe('ResultSpool', () => {
  it('gives every result a unique id, kept across a restart', async () => {
    const spool = await ResultSpool.open(dir);
    const [a, b] = [await spool.add(record(1)), await spool.add(record(1))];
    expect(a.record.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.record.id).not.toBe(b.record.id);
    expect((await ResultSpool.open(dir)).entries().map((e) => e.record.id)).toEqual([
      a.record.id,
      b.record.id,
    ]);
  });

  it('keeps pending results across a restart, in the order they were written', async () => {
    const spool = await ResultSpool.open(dir);
    for (const n of [1, 2, 3]) await spool.add(record(n));
    const reopened = await ResultSpool.open(dir);
    expect(reopened.entries().map(content)).toEqual([record(1), record(2), record(3)]);
    await reopened.add(record(4));
    expect(reopened.entries().map((e) => e.id)).toEqual([
      '000000000000',
      '000000000001',
      '000000000002',
      '000000000003',
    ]);
  });

  it('forgets only what was removed', async () => {
    const spool = await ResultSpool.open(dir);
    const entries = [await spool.add(record(1)), await spool.add(record(2))];
    await spool.remove(entries.slice(0, 1));
    expect(spool.size).toBe(1);
    expect((await ResultSpool.open(dir)).entries().map(content)).toEqual([record(2)]);
  });

  it('sets unreadable entries aside and drops unfinished writes', async () => {
    const spool = await ResultSpool.open(dir);
    await spool.add(record(1));
    await writeFile(join(dir, '000000000005.json'), '{"files": 42}');
    await writeFile(join(dir, '000000000006.json.tmp'), '{"partial');
    const corrupt: string[] = [];
    const reopened = await ResultSpool.open(dir, (file) => corrupt.push(file));
    expect(reopened.entries().map(content)).toEqual([record(1)]);
    expect(corrupt).toEqual([join(dir, '000000000005.json')]);
    expect((await readdir(dir)).sort()).toEqual(['000000000000.json', '000000000005.json.corrupt']);
    expect((await reopened.add(record(2))).id).toBe('000000000006');
  });

  it('keeps a rederivable record like any other, under its own name, in the order of the adds', async () => {
    const spool = await ResultSpool.open(dir);
    await spool.add(record(1));
    const unsynced = await spool.add(record(2), { rederivable: true });
    await spool.add(record(3));
    expect(unsynced.file).toBe('000000000001.unsynced.json');
    expect((await readdir(dir)).sort()).toEqual([
      '000000000000.json',
      '000000000001.unsynced.json',
      '000000000002.json',
    ]);
    const reopened = await ResultSpool.open(dir);
    expect(reopened.entries().map(content)).toEqual([record(1), record(2), record(3)]);
    await reopened.remove(reopened.entries().slice(0, 2));
    expect(await readdir(dir)).toEqual(['000000000002.json']);
  });

  it('drops an unreadable rederivable record (what a crash of the machine left) without calling it corrupt', async () => {
    const spool = await ResultSpool.open(dir);
    await spool.add(record(1), { rederivable: true });
    await writeFile(join(dir, '000000000001.unsynced.json'), ''); // the name reached the disk, the bytes did not
    await writeFile(join(dir, '000000000002.json'), '');
    const corrupt: string[] = [];
    const reopened = await ResultSpool.open(dir, (file) => corrupt.push(file));
    expect(reopened.entries().map(content)).toEqual([record(1)]);
    expect(corrupt).toEqual([join(dir, '000000000002.json')]);
    expect((await readdir(dir)).sort()).toEqual(['000000000000.unsynced.json', '000000000002.json.corrupt']);
    expect((await reopened.add(record(3))).id).toBe('000000000003');
  });
});
