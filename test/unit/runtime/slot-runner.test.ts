/**
 * The slot runner (src/runtime/slot-runner.ts) carrying out its rules with real promises: a task
 * whose slot is not free starts when one frees, the result is handed over once and its owner
 * told, a cancelled task's signal aborts and its result is never kept, and stop() aborts what
 * runs.
 */
import { describe, expect, it } from 'vitest';
import { type RunnableTask, SlotRunner } from '../../../src/runtime/slot-runner.ts';

/** A task that runs until the test settles it (or its signal aborts it). */
function heldTask(key: string, group = 'ns', owner = key) {
  let settle: (value: string) => void = () => {};
  const seen = { started: false, aborted: false, settled: 0 };
  const task: RunnableTask<string> = {
    key,
    owner,
    group,
    run: (signal) =>
      new Promise<string>((resolve, reject) => {
        seen.started = true;
        settle = resolve;
        signal.addEventListener('abort', () => {
          seen.aborted = true;
          reject(signal.reason);
        });
      }),
    onSettled: () => {
      seen.settled++;
    },
  };
  return { task, seen, settle: (value: string) => settle(value) };
}

/** Lets the runner's promise callbacks run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SlotRunner', () => {
  it('starts a waiting task once a slot frees, and hands each result over once', async () => {
    const runner = new SlotRunner<string>({ caps: { total: 1, perGroup: 1 } });
    const a = heldTask('a');
    const b = heldTask('b');
    runner.start(a.task);
    runner.start(b.task);
    runner.start(a.task); // asked again at the next look: nothing new
    await flush();
    expect([a.seen.started, b.seen.started]).toEqual([true, false]);
    expect(runner.stateOf('b')).toBe('waiting');

    a.settle('measured');
    await flush();
    expect(a.seen.settled).toBe(1);
    expect(b.seen.started).toBe(true);
    expect(runner.take('a')).toEqual({ ok: true, value: 'measured' });
    expect(runner.take('a')).toBeUndefined();
    b.settle('too');
    await flush();
    runner.stop();
  });

  it('aborts a cancelled task, keeps no result of it and does not tell its owner', async () => {
    const runner = new SlotRunner<string>({ caps: { total: 2, perGroup: 2 } });
    const held = heldTask('t/x', 'ns', 't');
    runner.start(held.task);
    await flush();
    runner.cancel('t');
    await flush();
    expect(held.seen.aborted).toBe(true);
    expect(held.seen.settled).toBe(0);
    expect(runner.take('t/x')).toBeUndefined();
    expect(runner.stateOf('t/x')).toBeUndefined();
    runner.stop();
  });

  it('keeps a throwing task as a failed result, for the caller to throw', async () => {
    const runner = new SlotRunner<string>({ caps: { total: 1, perGroup: 1 } });
    runner.start({
      key: 'k',
      owner: 'o',
      group: 'g',
      run: async () => {
        throw new Error('a bug');
      },
    });
    await flush();
    const result = runner.take('k');
    expect(result?.ok).toBe(false);
    runner.stop();
  });

  it('stop() aborts every running task, without waiting for them; nothing starts after', async () => {
    const gauges: number[] = [];
    const runner = new SlotRunner<string>({
      caps: { total: 4, perGroup: 4 },
      metrics: { running: (n) => gauges.push(n) },
    });
    const tasks = ['a', 'b', 'c'].map((k) => heldTask(k));
    for (const t of tasks) runner.start(t.task);
    await flush();
    runner.stop();
    expect(tasks.every((t) => t.seen.aborted)).toBe(true);
    await flush();
    expect(tasks.every((t) => t.seen.settled === 0)).toBe(true);
    expect(gauges.at(-1)).toBe(0);
    const late = heldTask('late');
    runner.start(late.task);
    await flush();
    expect(late.seen.started).toBe(false);
  });
});
