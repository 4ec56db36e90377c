/**
 * Which background tasks run and which wait: the pure rules of the slot runner (slot-runner.ts).
 *
 * A task is asked for by key, once: asking again for a key that waits, runs or has a result not
 * yet taken changes nothing, so a caller may ask at every look. At most `total` tasks run at
 * once, and at most `perGroup` of one group (a namespace): one group's many tasks cannot take
 * every slot. A free slot goes to the waiting task of the least busy group (fewest running),
 * the one asked for first among equals. A task whose slot is not free waits; it is not lost.
 * Cancelling an owner's tasks drops them whatever their state, freeing their slots at once.
 * Pure: the runner carries out what these return.
 */

export interface SlotCaps {
  /** Tasks running at once, over all groups. */
  readonly total: number;
  /** Tasks of one group running at once. */
  readonly perGroup: number;
}

export interface SlotTask {
  /** What the task is; one task per key. */
  readonly key: string;
  /** Whose it is (a Transaction's uid): what cancel() drops. */
  readonly owner: string;
  /** Whose slots it takes (a namespace): what perGroup bounds. */
  readonly group: string;
}

export interface Slots<T extends SlotTask = SlotTask> {
  /** Asked for, not started: in the order asked. */
  readonly waiting: readonly T[];
  readonly running: readonly T[];
  /** Settled, their results not yet taken. */
  readonly finished: readonly T[];
}

export type SlotState = 'waiting' | 'running' | 'finished';

export const NO_SLOTS: Slots<never> = { waiting: [], running: [], finished: [] };

export function stateOf(slots: Slots, key: string): SlotState | undefined {
  if (slots.running.some((t) => t.key === key)) return 'running';
  if (slots.waiting.some((t) => t.key === key)) return 'waiting';
  if (slots.finished.some((t) => t.key === key)) return 'finished';
  return undefined;
}

/** Asks for a task: it waits, unless its key is already known (then `slots` itself is returned). */
export function ask<T extends SlotTask>(slots: Slots<T>, task: T): Slots<T> {
  if (stateOf(slots, task.key) !== undefined) return slots;
  return { ...slots, waiting: [...slots.waiting, task] };
}

/** The waiting tasks the caps let start now, least busy group first; they are running after. */
export function admit<T extends SlotTask>(slots: Slots<T>, caps: SlotCaps): { slots: Slots<T>; start: T[] } {
  const busy = new Map<string, number>();
  for (const t of slots.running) busy.set(t.group, (busy.get(t.group) ?? 0) + 1);
  const waiting = [...slots.waiting];
  const start: T[] = [];
  while (slots.running.length + start.length < caps.total) {
    let pick = -1;
    for (let i = 0; i < waiting.length; i++) {
      const n = busy.get((waiting[i] as T).group) ?? 0;
      if (n >= caps.perGroup) continue;
      if (pick < 0 || n < (busy.get((waiting[pick] as T).group) ?? 0)) pick = i;
    }
    if (pick < 0) break;
    const [task] = waiting.splice(pick, 1) as [T];
    busy.set(task.group, (busy.get(task.group) ?? 0) + 1);
    start.push(task);
  }
  if (start.length === 0) return { slots, start };
  return { slots: { ...slots, waiting, running: [...slots.running, ...start] }, start };
}

/** A running task ended: its result waits to be taken. A key no longer running changes nothing. */
export function settle<T extends SlotTask>(slots: Slots<T>, key: string): Slots<T> {
  const task = slots.running.find((t) => t.key === key);
  if (!task) return slots;
  return {
    ...slots,
    running: slots.running.filter((t) => t !== task),
    finished: [...slots.finished, task],
  };
}

/** The result of a finished task was taken: its key may be asked for again. */
export function take<T extends SlotTask>(slots: Slots<T>, key: string): Slots<T> {
  if (!slots.finished.some((t) => t.key === key)) return slots;
  return { ...slots, finished: slots.finished.filter((t) => t.key !== key) };
}

/**
 * Drops an owner's tasks, but those whose keys are in `keep`: the running ones are returned, to
 * be aborted. Their slots are free at once.
 */
export function cancel<T extends SlotTask>(
  slots: Slots<T>,
  owner: string,
  keep: ReadonlySet<string> = new Set(),
): { slots: Slots<T>; abort: T[] } {
  const dropped = (t: T) => t.owner === owner && !keep.has(t.key);
  const abort = slots.running.filter(dropped);
  if (!slots.waiting.some(dropped) && abort.length === 0 && !slots.finished.some(dropped)) {
    return { slots, abort };
  }
  const kept = (list: readonly T[]) => list.filter((t) => !dropped(t));
  return {
    slots: { waiting: kept(slots.waiting), running: kept(slots.running), finished: kept(slots.finished) },
    abort,
  };
}
