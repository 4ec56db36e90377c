import { afterEach, describe, expect, it, vi } from 'vitest';
import { type WorkHandler, WorkQueue, type WorkResult } from '../../../src/runtime/work-queue.ts';
import { eventually } from '../../support/eventually.ts';

/**
 * A handler whose runs the test finishes by hand: `release(key)` ends the oldest run of `key`.
 * It records every start and the most runs of one key ever in flight at once.
 */
function heldHandler() {
  const started: string[] = [];
  const running = new Map<string, Array<() => void>>();
  let maxSameKey = 0;
  const handler: WorkHandler = (key) =>
    new Promise<void>((resolve) => {
      started.push(key);
      const runs = running.get(key) ?? [];
      runs.push(resolve);
      running.set(key, runs);
      maxSameKey = Math.max(maxSameKey, runs.length);
    });
  return {
    handler,
    started,
    maxSameKey: () => maxSameKey,
    running: () => [...running].filter(([, runs]) => runs.length > 0).map(([key]) => key),
    release(key: string) {
      const done = running.get(key)?.shift();
      if (!done) throw new Error(`${key} is not running`);
      done();
    },
  };
}

const poll = { intervalMs: 5, timeoutMs: 10_000 };
/** Lets every pending promise chain run (setImmediate is never faked here). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('adding a key that is already waiting is a no-op', async () => {
    const h = heldHandler();
    const adds = vi.fn();
    const depths: number[] = [];
    const q = new WorkQueue({ handler: h.handler, metrics: { add: adds, depth: (n) => depths.push(n) } });

    q.add('blocker');
    await eventually(() => expect(h.running()).toEqual(['blocker']), poll);
    q.add('a');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(1);
    h.release('blocker');
    await eventually(() => expect(h.running()).toEqual(['a']), poll);
    h.release('a');

    expect(await q.shutdown()).toBe(true);
    expect(h.started).toEqual(['blocker', 'a']);
    expect(adds).toHaveBeenCalledTimes(2);
    expect(Math.max(...depths)).toBe(1);
  });

  it('a key added while it is processed runs exactly once more, afterwards', async () => {
    const h = heldHandler();
    const q = new WorkQueue({ handler: h.handler, concurrency: 4 });

    q.add('a');
    await eventually(() => expect(h.running()).toEqual(['a']), poll);
    q.add('a');
    q.add('a');
    await settle();
    expect(h.started).toEqual(['a']);
    h.release('a');
    await eventually(() => expect(h.started).toEqual(['a', 'a']), poll);
    h.release('a');

    expect(await q.shutdown()).toBe(true);
    expect(h.started).toEqual(['a', 'a']);
    expect(h.maxSameKey()).toBe(1);
  });

  it('runs different keys concurrently up to the concurrency, never one key twice at once', async () => {
    const h = heldHandler();
    const q = new WorkQueue({ handler: h.handler, concurrency: 2 });

    for (const key of ['a', 'b', 'c', 'a', 'b']) q.add(key);
    await eventually(() => expect(h.running().sort()).toEqual(['a', 'b']), poll);
    expect(q.length).toBe(1);
    q.add('a');
    h.release('a');
    await eventually(() => expect(h.running().sort()).toEqual(['b', 'c']), poll);
    h.release('b');
    await eventually(() => expect(h.running().sort()).toEqual(['a', 'c']), poll);
    h.release('c');
    h.release('a');

    expect(await q.shutdown()).toBe(true);
    expect(h.started).toEqual(['a', 'b', 'c', 'a']);
    expect(h.maxSameKey()).toBe(1);
  });

  it('with groupOf, groups take turns: a group that added many keys does not go first with all of them', async () => {
    const h = heldHandler();
    const q = new WorkQueue({ handler: h.handler, groupOf: (key) => key.slice(0, key.indexOf('/')) });

    q.add('busy/t0');
    await eventually(() => expect(h.running()).toEqual(['busy/t0']), poll);
    // While the only worker is busy: many keys of busy, then one of quiet and two of other.
    for (let i = 1; i < 5; i++) q.add(`busy/t${i}`);
    q.add('quiet/t0');
    q.add('other/t0');
    q.add('other/t1');
    for (let done = 1; done < 8; done++) {
      h.release(h.running()[0] ?? '');
      await eventually(() => expect(h.started).toHaveLength(done + 1), poll);
    }
    h.release(h.running()[0] ?? '');

    expect(await q.shutdown()).toBe(true);
    // In turns, FIFO within a group: quiet's one key waits for one of busy's, not for four.
    expect(h.started).toEqual([
      'busy/t0',
      'busy/t1',
      'quiet/t0',
      'other/t0',
      'busy/t2',
      'other/t1',
      'busy/t3',
      'busy/t4',
    ]);
  });

  it('without groupOf, first in, first out', async () => {
    const h = heldHandler();
    const q = new WorkQueue({ handler: h.handler });
    q.add('busy/t0');
    await eventually(() => expect(h.running()).toEqual(['busy/t0']), poll);
    for (const key of ['busy/t1', 'busy/t2', 'quiet/t0']) q.add(key);
    for (let done = 1; done < 4; done++) {
      h.release(h.running()[0] ?? '');
      await eventually(() => expect(h.started).toHaveLength(done + 1), poll);
    }
    h.release(h.running()[0] ?? '');
    expect(await q.shutdown()).toBe(true);
    expect(h.started).toEqual(['busy/t0', 'busy/t1', 'busy/t2', 'quiet/t0']);
  });

  it('retries a failing key with growing backoff and forgets it on success', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const calls: number[] = [];
    let failuresLeft = 2;
    const q = new WorkQueue({
      handler: async (key) => {
        calls.push(q.numRequeues(key));
        if (failuresLeft-- > 0) throw new Error('boom');
      },
      retryBackoff: { baseMs: 100, capMs: 10_000, jitter: 0.5 },
      random: () => 0,
    });

    q.add('a');
    await settle();
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(99);
    await settle();
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(calls).toEqual([0, 1]);
    // The second retry waits twice as long.
    await vi.advanceTimersByTimeAsync(199);
    await settle();
    expect(calls).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();

    expect(calls).toEqual([0, 1, 2]);
    expect(q.numRequeues('a')).toBe(0);
    await q.shutdown();
  });

  it('forget() makes the next retry wait the base delay again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const calls: string[] = [];
    const q = new WorkQueue({
      handler: async (key) => void calls.push(key),
      retryBackoff: { baseMs: 100, capMs: 10_000, jitter: 0 },
    });

    q.addRateLimited('a');
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(3);
    q.forget('a');
    q.addRateLimited('a');
    await vi.advanceTimersByTimeAsync(100);
    await settle();

    expect(calls).toEqual(['a']);
    await q.shutdown();
  });

  it('runs a key again after the requeueAfterMs its handler returned', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const results: WorkResult[] = [{ requeueAfterMs: 5_000 }, undefined];
    let calls = 0;
    const q = new WorkQueue({ handler: async () => results[calls++] });

    q.add('a');
    await settle();
    await vi.advanceTimersByTimeAsync(4_999);
    await settle();
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(60_000);
    await settle();

    expect(calls).toBe(2);
    await q.shutdown();
  });

  it('addAfter keeps only the earliest pending delay of a key', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const calls: string[] = [];
    const q = new WorkQueue({ handler: async (key) => void calls.push(key) });

    q.addAfter('a', 1_000);
    q.addAfter('a', 100);
    q.addAfter('a', 500);
    q.addAfter('b', 100);
    q.addAfter('b', 1_000);
    await vi.advanceTimersByTimeAsync(99);
    await settle();
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(calls).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(5_000);
    await settle();

    expect(calls).toEqual(['a', 'b']);
    await q.shutdown();
  });

  it('shutdown waits for in-flight work, drops waiting and delayed keys, clears timers, accepts nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const h = heldHandler();
    const q = new WorkQueue({ handler: h.handler });
    q.add('inflight');
    await settle();
    q.add('waiting');
    q.addAfter('delayed', 1_000);
    q.addRateLimited('retried');

    let finished: boolean | undefined;
    const shutdown = q.shutdown().then((drained) => {
      finished = drained;
    });
    q.add('late');
    await settle();
    expect(finished).toBeUndefined();
    h.release('inflight');
    await shutdown;

    expect(finished).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    await settle();
    expect(h.started).toEqual(['inflight']);
    expect(q.isShuttingDown).toBe(true);
  });

  it('shutdown gives up after its timeout and aborts the signal of work still running', async () => {
    let signal: AbortSignal | undefined;
    const q = new WorkQueue({
      handler: (_key, s) =>
        new Promise<void>((resolve) => {
          signal = s;
          s.addEventListener('abort', () => resolve());
        }),
    });
    q.add('stuck');
    await eventually(() => expect(signal).toBeDefined(), poll);

    expect(await q.shutdown(1)).toBe(false);
    expect(signal?.aborted).toBe(true);
  });

  it('records queue latency and work duration once per run, and retries in the metrics', async () => {
    const latencies: number[] = [];
    const durations: number[] = [];
    const retry = vi.fn();
    let fail = true;
    const q = new WorkQueue({
      handler: async () => {
        if (fail) {
          fail = false;
          throw new Error('once');
        }
      },
      retryBackoff: { baseMs: 1, capMs: 1, jitter: 0 },
      metrics: {
        queueLatency: (s) => latencies.push(s),
        workDuration: (s) => durations.push(s),
        retry,
      },
    });

    q.add('a');
    await eventually(() => expect(durations).toHaveLength(2), poll);

    expect(latencies).toHaveLength(2);
    expect(Math.min(...latencies, ...durations)).toBeGreaterThanOrEqual(0);
    expect(retry).toHaveBeenCalledTimes(1);
    await q.shutdown();
  });

  it('a throwing metrics hook neither fails the work nor wedges its key', async () => {
    const h = heldHandler();
    const q = new WorkQueue({
      handler: h.handler,
      metrics: {
        workDuration: () => {
          throw new Error('metrics bug');
        },
      },
    });

    q.add('a');
    await eventually(() => expect(h.running()).toEqual(['a']), poll);
    q.add('a');
    h.release('a');
    await eventually(() => expect(h.started).toEqual(['a', 'a']), poll);
    h.release('a');

    expect(await q.shutdown()).toBe(true);
    expect(q.numRequeues('a')).toBe(0);
  });
});
