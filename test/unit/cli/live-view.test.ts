import { describe, expect, it } from 'vitest';
import { changedTransactions, LiveView, screenLines } from '../../../src/cli/live-view.ts';
import { txn } from './fixtures.ts';

const sink = () => {
  const written: string[] = [];
  return { written, write: (t: string) => written.push(t) };
};

describe('LiveView', () => {
  it('in a terminal, replaces the previous rendering in place', () => {
    const out = sink();
    const view = new LiveView(out, true);
    view.show('a\nb\n');
    view.show('c\n');
    expect(out.written).toEqual(['a\nb\n', '\x1b[2A\x1b[J', 'c\n']);
  });

  it('counts wrapped lines, so a redraw covers all of the previous one', () => {
    expect(screenLines('abc\n\nabcdefgh\n', 4)).toBe(4);
    expect(screenLines('abc\n\nabcdefgh\n', undefined)).toBe(3);
    const out = { ...sink(), columns: 4 };
    const view = new LiveView(out, true);
    view.show('abcdefgh\n');
    view.show('x\n');
    expect(out.written[1]).toBe('\x1b[2A\x1b[J');
  });

  it('elsewhere, appends every rendering', () => {
    const out = sink();
    const view = new LiveView(out, false);
    view.show('a\n');
    view.show('b\n');
    expect(out.written).toEqual(['a\n', 'b\n']);
  });
});

describe('changedTransactions', () => {
  it('returns the Transactions whose resourceVersion moved since the last snapshot', () => {
    const a = txn({ name: 'a' });
    const b = txn({ name: 'b' });
    const first = changedTransactions(new Map(), [a, b]);
    expect(first.changed.map((t) => t.metadata.name)).toEqual(['a', 'b']);
    const bNext = { ...b, metadata: { ...b.metadata, resourceVersion: '101' } };
    expect(changedTransactions(first.seen, [a, bNext]).changed.map((t) => t.metadata.name)).toEqual(['b']);
  });
});
