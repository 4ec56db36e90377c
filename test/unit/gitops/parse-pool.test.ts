import { describe, expect, it } from 'vitest';
import { loadDirectory, memoryReader, type SourceInfo } from '../../../src/gitops/index.ts';
import { resolveLimits } from '../../../src/gitops/options.ts';
import {
  directoryParser,
  inlineParser,
  PARSE_THREAD_MIN_DIRECTORIES,
  threadParser,
} from '../../../src/gitops/parse-pool.ts';
import { configMap, header, OPTIONS } from './diagnose.ts';

const SOURCE: SourceInfo = {
  repository: 'https://git.example/r.git',
  branch: 'main',
  commit: 'a'.repeat(40),
};

/** Directories as a poll loads them: valid ones, one refused, one with a ROLLBACK file. */
async function loadDirectories(count: number) {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const dir = `transactions/app-${i}`;
    files[`${dir}/transaction.yaml`] = header(`app-${i}`);
    files[`${dir}/10-settings.create.yaml`] = i === 1 ? 'kind: [' : configMap;
    if (i === 2) files[`${dir}/ROLLBACK`] = 'bad release\n';
  }
  const reader = memoryReader(files);
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      loadDirectory(reader, `transactions/app-${i}`, resolveLimits({})),
    ),
  );
}

describe('parsing a poll on a thread of its own', () => {
  it('gives what parsing on this thread gives, each answer to its own directory', async () => {
    const directories = await loadDirectories(20);
    const here = await Promise.all(directories.map((d) => inlineParser(OPTIONS).parse(d, SOURCE)));
    const parser = threadParser(OPTIONS);
    try {
      expect(parser.threaded).toBe(true);
      // All sent at once: the answers must still match their directories.
      const there = await Promise.all(directories.map((d) => parser.parse(d, SOURCE)));
      expect(there).toEqual(here);
      expect(there.map((r) => r.ok)).toEqual(here.map((_, i) => i !== 1));
      expect(there[2]?.rollback?.reason).toBe('bad release');
    } finally {
      await parser.close();
    }
  });

  it('spreads a big parse over several threads, each answer still to its own directory', async () => {
    const directories = await loadDirectories(40);
    const here = await Promise.all(directories.map((d) => inlineParser(OPTIONS).parse(d, SOURCE)));
    const parser = directoryParser(OPTIONS, directories.length, { threads: 2 });
    try {
      expect(parser.threaded).toBe(true);
      expect(await Promise.all(directories.map((d) => parser.parse(d, SOURCE)))).toEqual(here);
    } finally {
      await parser.close();
    }
  });

  it('starts a thread only for a poll of many directories', async () => {
    const small = directoryParser(OPTIONS, PARSE_THREAD_MIN_DIRECTORIES - 1);
    const big = directoryParser(OPTIONS, PARSE_THREAD_MIN_DIRECTORIES);
    expect(small.threaded).toBe(false);
    expect(big.threaded).toBe(true);
    await Promise.all([small.close(), big.close()]);
  });

  it.each([
    ['stops at once', 'parse-worker-exits.mjs', /exit code 7/],
    ['throws once it has work', 'parse-worker-fails.mjs', /the parse thread broke/],
  ])('parses here what a thread that %s left, and the rest of the poll', async (_, script, reason) => {
    const directories = await loadDirectories(6);
    const expected = await Promise.all(directories.map((d) => inlineParser(OPTIONS).parse(d, SOURCE)));
    const lost: Error[] = [];
    const parser = threadParser(OPTIONS, {
      worker: new URL(`./fixtures/${script}`, import.meta.url),
      onThreadLost: (error) => lost.push(error),
    });
    try {
      const first = await Promise.all(directories.slice(0, 3).map((d) => parser.parse(d, SOURCE)));
      const rest = await Promise.all(directories.slice(3).map((d) => parser.parse(d, SOURCE)));
      expect([...first, ...rest]).toEqual(expected);
      expect(parser.threaded).toBe(false);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.message).toMatch(reason);
    } finally {
      await parser.close();
    }
  });

  it('gives the thread no environment: it never holds the Git credentials', async () => {
    const [directory] = await loadDirectories(1);
    if (!directory) throw new Error('no directory');
    process.env.JANUS_GIT_TOKEN_FOR_TEST = 'secret';
    const parser = threadParser(OPTIONS, {
      worker: new URL('./fixtures/parse-worker-env.mjs', import.meta.url),
    });
    try {
      await expect(parser.parse(directory, SOURCE)).rejects.toThrow(/failed: \[\]$/);
    } finally {
      delete process.env.JANUS_GIT_TOKEN_FOR_TEST;
      await parser.close();
    }
  });

  it('rejects what is still pending when the poll closes it, and reports no loss', async () => {
    const [directory] = await loadDirectories(1);
    if (!directory) throw new Error('no directory');
    const lost: Error[] = [];
    const parser = threadParser(OPTIONS, { onThreadLost: (error) => lost.push(error) });
    const pending = expect(parser.parse(directory, SOURCE)).rejects.toThrow(/closed/);
    await parser.close();
    await pending;
    expect(lost).toEqual([]);
  });
});
