/**
 * The pure rules of the slot runner (src/runtime/slot-rules.ts): which asked-for tasks run now
 * and which wait (a global cap and a per-group cap, the least busy group first), that a task is
 * asked for once whatever the number of looks, and what cancelling an owner's tasks drops.
 */
import { describe, expect, it } from 'vitest';
import {
  admit,
  ask,
  cancel,
  NO_SLOTS,
  type SlotCaps,
  type Slots,
  type SlotTask,
  settle,
  stateOf,
  take,
} from '../../../src/runtime/slot-rules.ts';

const task = (group: string, owner: string, n: number): SlotTask => ({
  key: `${owner}/check-${n}`,
  owner,
  group,
});

/** Asks for every task, in order, then admits what the caps allow. */
function askAll(tasks: readonly SlotTask[], caps: SlotCaps, from: Slots = NO_SLOTS) {
  let slots = from;
  for (const t of tasks) slots = ask(slots, t);
  return admit(slots, caps);
}

const keys = (tasks: readonly SlotTask[]) => tasks.map((t) => t.key);

describe('slot rules', () => {
  it('runs at most the global cap at once; the others wait, in the order they were asked for', () => {
    const tasks = Array.from({ length: 5 }, (_, i) => task(`ns-${i}`, `txn-${i}`, 0));
    const { slots, start } = askAll(tasks, { total: 3, perGroup: 3 });
    expect(keys(start)).toEqual(['txn-0/check-0', 'txn-1/check-0', 'txn-2/check-0']);
    expect(keys(slots.running)).toEqual(keys(start));
    expect(keys(slots.waiting)).toEqual(['txn-3/check-0', 'txn-4/check-0']);
    // Nothing more starts while the slots are taken.
    expect(admit(slots, { total: 3, perGroup: 3 }).start).toEqual([]);
  });

  it('starts a waiting task when a running one settles, and keeps the result until it is taken', () => {
    const tasks = [task('a', 't1', 0), task('b', 't2', 0)];
    const caps = { total: 1, perGroup: 1 };
    const first = askAll(tasks, caps);
    expect(stateOf(first.slots, 't2/check-0')).toBe('waiting');
    const settled = settle(first.slots, 't1/check-0');
    expect(stateOf(settled, 't1/check-0')).toBe('finished');
    const next = admit(settled, caps);
    expect(keys(next.start)).toEqual(['t2/check-0']);
    expect(stateOf(take(next.slots, 't1/check-0'), 't1/check-0')).toBeUndefined();
  });

  it('asks for a task once: a key waiting, running or finished is not asked for again', () => {
    const t = task('a', 't1', 0);
    const caps = { total: 1, perGroup: 1 };
    const waiting = ask(ask(NO_SLOTS, t), t);
    expect(waiting.waiting).toHaveLength(1);
    const { slots } = admit(waiting, caps);
    expect(ask(slots, t)).toBe(slots);
    const finished = settle(slots, t.key);
    expect(ask(finished, t)).toBe(finished);
    // Taken, it may be asked for again (its result was lost before the status write, say).
    expect(stateOf(ask(take(finished, t.key), t), t.key)).toBe('waiting');
  });

  it('gives one group at most its cap, so other groups find free slots', () => {
    const busy = Array.from({ length: 10 }, (_, i) => task('busy', `busy-${i}`, 0));
    const other = [task('other', 'other-0', 0), task('other', 'other-1', 0)];
    const { slots, start } = askAll([...busy, ...other], { total: 6, perGroup: 4 });
    expect(start.filter((t) => t.group === 'busy')).toHaveLength(4);
    expect(keys(start.filter((t) => t.group === 'other'))).toEqual(['other-0/check-0', 'other-1/check-0']);
    expect(slots.waiting.every((t) => t.group === 'busy')).toBe(true);
  });

  it('gives a freed slot to the least busy group first, even when another group asked earlier', () => {
    const caps = { total: 4, perGroup: 3 };
    const first = askAll(
      [task('a', 'a-0', 0), task('a', 'a-1', 0), task('a', 'a-2', 0), task('b', 'b-0', 0)],
      caps,
    );
    expect(first.slots.waiting).toEqual([]);
    // Group a asks for one more before group b does; a slot of a's frees.
    let slots = ask(first.slots, task('a', 'a-3', 0));
    slots = ask(slots, task('b', 'b-1', 0));
    slots = settle(slots, 'a-0/check-0');
    const next = admit(slots, caps);
    // a runs 2, b runs 1: b takes the slot.
    expect(keys(next.start)).toEqual(['b-1/check-0']);
    expect(keys(next.slots.waiting)).toEqual(['a-3/check-0']);
  });

  it('cancels an owner: its running tasks are returned to abort, its waiting and finished ones dropped, their slots freed', () => {
    const caps = { total: 3, perGroup: 3 };
    const mine = [0, 1, 2, 3].map((n) => task('a', 'mine', n));
    let { slots } = askAll(mine.slice(0, 3), caps);
    slots = settle(slots, 'mine/check-0');
    ({ slots } = askAll([mine[3] as SlotTask], caps, slots));
    slots = ask(slots, task('b', 'theirs', 0));
    expect(keys(slots.running)).toEqual(['mine/check-1', 'mine/check-2', 'mine/check-3']);
    expect(keys(slots.waiting)).toEqual(['theirs/check-0']);
    const { slots: after, abort } = cancel(slots, 'mine');
    expect(keys(abort)).toEqual(['mine/check-1', 'mine/check-2', 'mine/check-3']);
    for (const t of mine) expect(stateOf(after, t.key)).toBeUndefined();
    expect(keys(admit(after, caps).start)).toEqual(['theirs/check-0']);
  });

  it('cancels only the tasks of an owner that are no longer wanted', () => {
    const caps = { total: 4, perGroup: 4 };
    const { slots } = askAll([task('a', 'mine', 0), task('a', 'mine', 1)], caps);
    const { slots: after, abort } = cancel(slots, 'mine', new Set(['mine/check-1']));
    expect(keys(abort)).toEqual(['mine/check-0']);
    expect(stateOf(after, 'mine/check-1')).toBe('running');
  });

  it('a settle after a cancel changes nothing: the slot was freed at the cancel', () => {
    const t = task('a', 'mine', 0);
    const { slots } = askAll([t], { total: 1, perGroup: 1 });
    const cancelled = cancel(slots, 'mine').slots;
    expect(settle(cancelled, t.key)).toEqual(cancelled);
    expect(stateOf(settle(cancelled, t.key), t.key)).toBeUndefined();
  });
});
