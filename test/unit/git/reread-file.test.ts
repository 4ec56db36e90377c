import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rereadFile } from '../../../src/git/reread-file.ts';

class Refused extends Error {}

async function fileWith(text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'reread-')), 'f');
  await writeFile(path, text);
  return path;
}

describe('a file re-read at each use', () => {
  let parses = 0;
  const opts = {
    what: 'the test file',
    maxBytes: 16,
    parse: (text: string) => {
      parses++;
      if (text.startsWith('bad')) throw new Error('not usable');
      return text.trim().toUpperCase();
    },
    refuse: (message: string) => new Refused(message),
  };

  it('parses again only when the text changed', async () => {
    const path = await fileWith('one');
    const file = rereadFile(path, opts);
    parses = 0;
    expect(await file.read()).toEqual({ value: 'ONE', changed: true });
    expect(await file.read()).toEqual({ value: 'ONE', changed: false });
    await writeFile(path, 'two');
    expect(await file.read()).toEqual({ value: 'TWO', changed: true });
    expect(parses).toBe(2);
  });

  it('refuses what it cannot read, what is too large and what does not parse, naming the file; and tries again next time', async () => {
    const path = await fileWith('bad');
    const file = rereadFile(path, opts);
    await expect(file.read()).rejects.toThrow(new Refused(`the test file ${path}: not usable`));
    await writeFile(path, 'x'.repeat(17));
    await expect(file.read()).rejects.toThrow(new Refused(`the test file ${path} is larger than 16 bytes`));
    await writeFile(path, 'good');
    expect(await file.read()).toEqual({ value: 'GOOD', changed: true });
    await expect(rereadFile(join(path, 'missing'), opts).read()).rejects.toThrow(
      /cannot read the test file .*\(ENOTDIR\)/,
    );
  });
});
