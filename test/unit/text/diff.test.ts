import { describe, expect, it } from 'vitest';
import { diffLines, unifiedDiff } from '../../../src/text/diff.ts';

const labels = { from: 'a', to: 'b' };
const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`);
const text = (ls: string[]) => (ls.length ? `${ls.join('\n')}\n` : '');

/** Applies a unified diff to `before` (a strict applier: context and removed lines must match). */
function applyPatch(before: string[], patch: string): string[] {
  const out: string[] = [];
  let at = 0;
  const body = patch.split('\n').slice(2);
  for (let i = 0; i < body.length; i++) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(body[i] ?? '');
    if (!header) continue;
    const start = Number(header[1]) - (header[2] === '0' ? 0 : 1);
    while (at < start) out.push(before[at++] as string);
    for (i++; i < body.length && !(body[i] ?? '').startsWith('@@') && body[i] !== ''; i++) {
      const line = body[i] as string;
      if (line[0] === '+') out.push(line.slice(1));
      else {
        expect(before[at]).toBe(line.slice(1));
        if (line[0] === ' ') out.push(line.slice(1));
        at++;
      }
    }
    i--;
  }
  while (at < before.length) out.push(before[at++] as string);
  return out;
}

function lcsLength(a: string[], b: string[]): number {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      dp[i]![j] = a[i - 1] === b[j - 1] ? dp[i - 1]![j - 1]! + 1 : Math.max(dp[i - 1]![j]!, dp[i]![j - 1]!);
  return dp[a.length]![b.length]!;
}

/** A deterministic pseudo-random generator, so a failure reproduces. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', labels)).toBe('');
    expect(unifiedDiff(undefined, undefined, labels)).toBe('');
  });

  it('shows one changed line with three lines of context, in diff -u form', () => {
    const before = lines(10);
    const after = [...before];
    after[4] = 'changed';
    expect(unifiedDiff(text(before), text(after), { from: 'current', to: 'planned' })).toBe(
      [
        '--- current',
        '+++ planned',
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+changed',
        ' line 6',
        ' line 7',
        ' line 8',
        '',
      ].join('\n'),
    );
  });

  it('numbers an absent side as an empty file (0,0)', () => {
    expect(unifiedDiff(undefined, 'x\ny\n', labels)).toBe('--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n');
    expect(unifiedDiff('x\n', undefined, labels)).toBe('--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n');
  });

  it('splits changes far apart into separate hunks and merges close ones', () => {
    const before = lines(30);
    const far = [...before];
    far[2] = 'X';
    far[25] = 'Y';
    expect(unifiedDiff(text(before), text(far), labels).match(/^@@/gm)).toHaveLength(2);
    const close = [...before];
    close[2] = 'X';
    close[8] = 'Y'; // six unchanged lines between: the two contexts touch
    expect(unifiedDiff(text(before), text(close), labels).match(/^@@/gm)).toHaveLength(1);
  });

  it('round-trips and is minimal on random edits', () => {
    const next = random(42);
    for (let round = 0; round < 200; round++) {
      const alphabet = ['a', 'b', 'c', 'd', 'e'];
      const make = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * 5)] as string);
      const a = make(Math.floor(next() * 25));
      const b = make(Math.floor(next() * 25));
      const edits = diffLines(a, b);
      expect(edits.filter((e) => e.op !== '+').map((e) => e.line)).toEqual(a);
      expect(edits.filter((e) => e.op !== '-').map((e) => e.line)).toEqual(b);
      expect(edits.filter((e) => e.op === ' ')).toHaveLength(lcsLength(a, b));
      const patch = unifiedDiff(text(a), text(b), labels);
      if (patch) expect(applyPatch(a, patch)).toEqual(b);
    }
  });

  it('stays correct past the edit-distance limit (shown as replaced)', () => {
    const a = lines(2500, 'old');
    const b = lines(2500, 'new');
    const edits = diffLines(a, b);
    expect(edits.filter((e) => e.op === '-')).toHaveLength(2500);
    expect(applyPatch(a, unifiedDiff(text(a), text(b), labels, 0))).toEqual(b);
  });
});
