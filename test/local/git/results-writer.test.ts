/** The results branch over real smart HTTP: commits, batching, races, outages and restarts. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Phase } from '../../../src/api/v1alpha1/index.ts';
import { GitRepository } from '../../../src/git/index.ts';
import {
  type ResultRecord,
  ResultsWriter,
  type ResultsWriterOptions,
  renderTransactionResult,
} from '../../../src/results/index.ts';
import { PUSH_RECORDS } from '../../../src/results/writer.ts';
import { eventually } from '../../support/eventually.ts';
import { type GitServer, git, pushCommit, startGitServer } from '../../support/git/git-server.ts';
import { aTransaction } from '../../support/transactions.ts';

/** Every temporary directory of this file lives here, removed at the end. */
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const BRANCH = 'janus/results';
let server: GitServer;
let repoName: string;
let bare: string;
let counter = 0;
const writers: ResultsWriter[] = [];

const result = (name: string, phase = 'Committed'): ResultRecord => ({
  files: { [`results/default/${name}.yaml`]: `phase: ${phase}\n` },
  message: `default/${name}: ${phase} (1/1 changes)\n\nJanus-Transaction: default/${name}\nJanus-Phase: ${phase}\n`,
});

async function openWriter(
  overrides: Partial<ResultsWriterOptions> = {},
  cacheDir?: string,
): Promise<ResultsWriter> {
  const repository = await GitRepository.open({
    location: server.url(repoName),
    cacheDir: cacheDir ?? (await mkdtemp(join(scratch, 'cache-'))),
  });
  const writer = await ResultsWriter.open({
    repository,
    batchDelayMs: 60_000, // tests flush explicitly unless they test the background retry
    retry: { baseMs: 50, capMs: 200, jitter: 0.5 },
    replay: { baseMs: 10, capMs: 50, jitter: 0.5, attempts: 4 },
    clock: () => new Date('2026-03-01T12:00:00Z'),
    ...overrides,
  });
  writers.push(writer);
  return writer;
}

/** Subjects and parent counts on the results branch, newest first, read with native git. */
async function history(): Promise<string[]> {
  const log = await git(bare, 'log', '--format=%s|%P', BRANCH);
  return log.split('\n').map((line) => {
    const [subject, parents] = line.split('|');
    return `${subject} [${parents ? parents.split(' ').length : 0} parents]`;
  });
}

const show = (path: string) => git(bare, 'show', `${BRANCH}:${path}`);

beforeAll(async () => {
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  repoName = `results-${++counter}`;
  bare = await server.createRepo(repoName);
  await pushCommit(bare, 'main', { 'transactions/README.md': 'deploys\n' });
});
afterEach(async () => {
  server.setDown(false);
  server.beforeRequest(() => true);
  await Promise.all(writers.splice(0).map((w) => w.close()));
});

describe('ResultsWriter', () => {
  it('starts the results branch as its own history, then builds on its tip', async () => {
    const writer = await openWriter();
    await writer.write(result('alpha'));
    await writer.flush();
    await writer.write(result('beta'));
    await writer.flush();
    expect(await history()).toEqual([
      'default/beta: Committed (1/1 changes) [1 parents]',
      'default/alpha: Committed (1/1 changes) [0 parents]',
    ]);
    expect(await show('results/default/alpha.yaml')).toBe('phase: Committed');
    expect(await git(bare, 'merge-base', 'main', BRANCH).catch(() => 'none')).toBe('none');
    expect(writer.pending).toBe(0);
  });

  it('pushes results written together in one push, one commit each', async () => {
    const writer = await openWriter();
    server.clearRequests();
    await writer.write(result('one'));
    await writer.write(result('two', 'RolledBack'));
    await writer.write(result('three', 'Failed'));
    const report = await writer.flush();
    expect(report.records).toBe(3);
    const pushes = server
      .requests(repoName)
      .filter((r) => r.method === 'POST' && r.path === 'git-receive-pack');
    expect(pushes).toHaveLength(1);
    expect(await history()).toHaveLength(3);
    expect(await show('results/default/two.yaml')).toBe('phase: RolledBack');
  });

  it(`pushes a flush of many results ${PUSH_RECORDS} at a time, in order, every one on the branch`, async () => {
    const writer = await openWriter();
    server.clearRequests();
    const names = Array.from(
      { length: 2 * PUSH_RECORDS + 5 },
      (_, i) => `many-${String(i).padStart(3, '0')}`,
    );
    for (const name of names) await writer.write(result(name));
    const report = await writer.flush();
    expect(report.records).toBe(names.length);
    const pushes = server
      .requests(repoName)
      .filter((r) => r.method === 'POST' && r.path === 'git-receive-pack');
    expect(pushes).toHaveLength(3); // before: 1, holding every commit's objects at once
    expect(await history()).toEqual(
      names
        .map((name, i) => `default/${name}: Committed (1/1 changes) [${i === 0 ? 0 : 1} parents]`)
        .reverse(),
    );
    expect(writer.pending).toBe(0);
  });

  it('replays onto the new tip when someone pushed between its fetch and its push, keeping their commit', async () => {
    const writer = await openWriter();
    await writer.write(result('first'));
    await writer.flush();
    let theirs = '';
    server.beforeRequest(async (request) => {
      if (request.repo !== repoName || request.query !== 'service=git-receive-pack') return false;
      theirs = await pushCommit(
        bare,
        BRANCH,
        { 'results/other/audit.yaml': 'by: someone else\n' },
        'someone else',
      );
      return true;
    });
    await writer.write(result('second'));
    const report = await writer.flush();

    expect(report.replays).toBe(1);
    expect(await history()).toEqual([
      'default/second: Committed (1/1 changes) [1 parents]',
      'someone else [1 parents]',
      'default/first: Committed (1/1 changes) [0 parents]',
    ]);
    // Never forced: their commit is an ancestor of the tip and their file is still there.
    await git(bare, 'merge-base', '--is-ancestor', theirs, BRANCH);
    expect(await show('results/other/audit.yaml')).toBe('by: someone else');
    expect(await show('results/default/second.yaml')).toBe('phase: Committed');
  });

  it('also replays when the server itself rejects the update (the race lands after discovery)', async () => {
    const writer = await openWriter();
    await writer.write(result('first'));
    await writer.flush();
    server.beforeRequest(async (request) => {
      if (request.repo !== repoName || request.path !== 'git-receive-pack' || request.method !== 'POST')
        return false;
      await pushCommit(bare, BRANCH, { 'results/other/late.yaml': 'late\n' }, 'late writer');
      return true;
    });
    await writer.write(result('second'));
    expect((await writer.flush()).replays).toBe(1);
    expect((await history()).slice(0, 2)).toEqual([
      'default/second: Committed (1/1 changes) [1 parents]',
      'late writer [1 parents]',
    ]);
  });

  it('keeps results while the server is down and pushes them once it is back', async () => {
    const writer = await openWriter({ batchDelayMs: 10 });
    server.setDown(true);
    await writer.write(result('during-outage'));
    await expect(writer.flush()).rejects.toMatchObject({ kind: 'unreachable' });
    expect(writer.pending).toBe(1);
    expect(await git(bare, 'branch', '--list', BRANCH)).toBe('');

    server.setDown(false);
    await eventually(async () =>
      expect(await history()).toEqual(['default/during-outage: Committed (1/1 changes) [0 parents]']),
    );
    await eventually(() => expect(writer.pending).toBe(0));
  });

  it('survives a restart: the next process pushes what the previous one could not', async () => {
    const cacheDir = await mkdtemp(join(scratch, 'cache-'));
    server.setDown(true, 'reset');
    const first = await openWriter({}, cacheDir);
    await first.write(result('before-restart'));
    await expect(first.flush()).rejects.toMatchObject({ kind: 'unreachable' });
    await first.close();

    server.setDown(false);
    const second = await openWriter({}, cacheDir);
    expect(second.pending).toBe(1);
    await eventually(async () =>
      expect(await history()).toEqual(['default/before-restart: Committed (1/1 changes) [0 parents]']),
    );
  });

  it('does not record a result twice when it was pushed just before a crash', async () => {
    const cacheDir = await mkdtemp(join(scratch, 'cache-'));
    const first = await openWriter({}, cacheDir);
    const record = result('pushed-then-crashed');
    const notice = { files: {}, message: 'default/x: edit ignored (already materialized)\n' };
    await first.write(record);
    await first.write(notice);
    const spoolDir = join(
      (await GitRepository.open({ location: server.url(repoName), cacheDir })).stateDir,
      'pending-results',
    );
    const queued = await Promise.all(
      (await readdir(spoolDir)).map(async (f) => [f, await readFile(join(spoolDir, f))] as const),
    );
    await first.flush();
    await first.close();
    // The crash: the push went through but the spool files were not removed yet.
    for (const [file, bytes] of queued) await writeFile(join(spoolDir, file), bytes);

    const second = await openWriter({}, cacheDir);
    await eventually(() => expect(second.pending).toBe(0));
    expect(await history()).toEqual([
      'default/x: edit ignored (already materialized) [1 parents]',
      'default/pushed-then-crashed: Committed (1/1 changes) [0 parents]',
    ]);
  });

  for (const mode of ['error', 'reset'] as const) {
    it(`writes each outcome once when pushes land but their responses are lost (${mode})`, async () => {
      const writer = await openWriter();
      // A rollback's start and its end rewrite the same file: a replay by content alone would
      // commit the start again on top of the end, and then the end again.
      await writer.write(result('deploy', 'RollingBack'));
      await writer.write(result('deploy', 'RolledBack'));
      await writer.write(result('other'));
      server.loseResponses(2, mode);
      await expect(writer.flush()).rejects.toThrow(); // landed, but the writer cannot know
      await writer.write(result('late', 'Failed'));
      await expect(writer.flush()).rejects.toThrow(); // only "late" is pushed again; lost too
      const report = await writer.flush(); // finds all four on the branch: nothing to push
      expect(report.records).toBe(4); // all four confirmed: they were on the branch already
      expect(writer.pending).toBe(0);
      expect(await history()).toEqual([
        'default/late: Failed (1/1 changes) [1 parents]',
        'default/other: Committed (1/1 changes) [1 parents]',
        'default/deploy: RolledBack (1/1 changes) [1 parents]',
        'default/deploy: RollingBack (1/1 changes) [0 parents]',
      ]);
      expect(await show('results/default/deploy.yaml')).toBe('phase: RolledBack');
      const trailers = await git(bare, 'log', '--format=%(trailers:key=Janus-Result,valueonly)', BRANCH);
      expect(new Set(trailers.split('\n').filter(Boolean)).size).toBe(4);
    });
  }

  it('a result queued again after it landed is still written once (same id)', async () => {
    const writer = await openWriter();
    await writer.write(result('once'));
    server.loseResponses(1, 'error');
    await expect(writer.flush()).rejects.toThrow();
    await writer.write(result('later'));
    await writer.flush();
    expect(await history()).toEqual([
      'default/later: Committed (1/1 changes) [1 parents]',
      'default/once: Committed (1/1 changes) [0 parents]',
    ]);
  });

  describe('one record per outcome, whoever writes it', () => {
    /**
     * The outcome of Transaction `name` (uid `uid-<name>`) as the replica `identity` renders it:
     * two writers' records of one outcome differ in bytes (here who recorded it; also the
     * version, or the moment the Transaction was read), never in the outcome.
     */
    const outcome = (name: string, phase: Phase, identity: string): ResultRecord => {
      const committed = phase !== 'Pending';
      const txn = aTransaction({
        namespace: 'default',
        name,
        uid: `uid-${name}`,
        changes: [{ target: { apiVersion: 'v1', kind: 'ConfigMap', name }, type: 'Patch', content: {} }],
        status: {
          phase,
          items: [
            {
              target: `v1 ConfigMap default/${name}`,
              prepared: committed,
              committed,
              ...(phase === 'RolledBack' && { rolledBack: true }),
            },
          ],
        },
      });
      return renderTransactionResult(txn, { controllerVersion: '0.1.0', identity });
    };

    it('a push that lands after the next writer read the branch: the replay leaves out the outcomes it holds', async () => {
      // The old leader's push is in flight when it dies; the next leader read the branch before
      // it landed, so it records the same outcomes itself, and its push is refused.
      const dead = await openWriter();
      const next = await openWriter();
      await dead.write(outcome('x', 'Committed', 'replica-a'));
      await dead.write(outcome('y', 'Committed', 'replica-a'));
      server.beforeRequest(async (request) => {
        if (request.repo !== repoName || request.path !== 'git-receive-pack') return false;
        server.beforeRequest(() => true); // the dead writer's own requests pass
        await dead.flush();
        return true;
      });
      for (const name of ['x', 'y', 'z']) await next.write(outcome(name, 'Committed', 'replica-b'));
      expect((await next.flush()).replays).toBe(1);

      expect(await history()).toEqual([
        'default/z: Committed (1/1 changes) [1 parents]',
        'default/y: Committed (1/1 changes) [1 parents]',
        'default/x: Committed (1/1 changes) [0 parents]',
      ]);
      expect(await show('results/default/x.yaml')).toContain('identity: replica-a');
    });

    it('records a dead writer left in its spool are not pushed over what the next one recorded since', async () => {
      const cacheDir = await mkdtemp(join(scratch, 'cache-'));
      const dead = await openWriter({}, cacheDir);
      server.setDown(true, 'reset');
      await dead.write(outcome('same', 'Committed', 'replica-a'));
      await dead.write(outcome('moved-on', 'Pending', 'replica-a'));
      await dead.write(outcome('moved-on', 'Committed', 'replica-a'));
      await expect(dead.flush()).rejects.toMatchObject({ kind: 'unreachable' });
      await dead.close();
      server.setDown(false);

      const next = await openWriter();
      await next.write(outcome('same', 'Committed', 'replica-b'));
      for (const phase of ['Pending', 'Committed', 'RollingBack', 'RolledBack'] as const)
        await next.write(outcome('moved-on', phase, 'replica-b'));
      await next.flush();
      const recorded = await history();

      // The dead writer leads again: its spool is pushed, and adds nothing.
      const back = await openWriter({}, cacheDir);
      await eventually(() => expect(back.pending).toBe(0));
      expect(await history()).toEqual(recorded);
      expect(recorded).toHaveLength(5);
      expect(await show('results/default/moved-on.yaml')).toContain('phase: RolledBack');
    });

    it('still writes the next outcome of a Transaction another writer recorded', async () => {
      const first = await openWriter();
      await first.write(outcome('next', 'Pending', 'replica-a'));
      await first.flush();
      const second = await openWriter();
      await second.write(outcome('next', 'Pending', 'replica-b'));
      await second.write(outcome('next', 'Committed', 'replica-b'));
      await second.flush();
      expect(await history()).toEqual([
        'default/next: Committed (1/1 changes) [1 parents]',
        'default/next: Pending (0/1 changes) [0 parents]',
      ]);
    });
  });
});
