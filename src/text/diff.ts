/**
 * Line-based unified diff (the format of `diff -u` and `git diff`), for `janus plan` and
 * `janus recover`. Pure. Myers' O(ND) algorithm after trimming the common prefix and suffix;
 * past MAX_EDIT_DISTANCE edits it stops searching and shows the differing middle as replaced,
 * which keeps memory bounded on huge, completely different objects.
 */

export type EditOp = ' ' | '-' | '+';
export interface Edit {
  op: EditOp;
  line: string;
}

const MAX_EDIT_DISTANCE = 2000;
export const CONTEXT_LINES = 3;

/** The shortest edit script turning `a` into `b`, as kept, removed and added lines. */
export function diffLines(a: readonly string[], b: readonly string[]): Edit[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const keep = (lines: readonly string[]): Edit[] => lines.map((line) => ({ op: ' ', line }));
  const middle = myers(a.slice(start, endA), b.slice(start, endB)) ?? [
    ...a.slice(start, endA).map((line): Edit => ({ op: '-', line })),
    ...b.slice(start, endB).map((line): Edit => ({ op: '+', line })),
  ];
  return [...keep(a.slice(0, start)), ...middle, ...keep(a.slice(endA))];
}

/** Myers' greedy algorithm with a trace for backtracking; undefined past MAX_EDIT_DISTANCE. */
function myers(a: readonly string[], b: readonly string[]): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds the furthest x per diagonal k (k in -d..d) reached with d edits.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, MAX_EDIT_DISTANCE); d++) {
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0));
      let x = down ? (v[offset + k + 1] ?? 0) : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        trace.push(v.slice(offset - d, offset + d + 1));
        return backtrack(trace, a, b);
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  return undefined;
}

function backtrack(trace: Int32Array[], a: readonly string[], b: readonly string[]): Edit[] {
  const out: Edit[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d > 0; d--) {
    const previous = trace[d - 1] as Int32Array; // k from -(d-1) to d-1, at index k + d - 1
    const at = (k: number) => previous[k + d - 1] ?? 0;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      out.push({ op: ' ', line: a[x] as string });
    }
    if (down) out.push({ op: '+', line: b[--y] as string });
    else out.push({ op: '-', line: a[--x] as string });
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    out.push({ op: ' ', line: a[x] as string });
  }
  return out.reverse();
}

export interface DiffLabels {
  /** Shown after `---`, e.g. "current shop/web". */
  from: string;
  /** Shown after `+++`. */
  to: string;
}

/**
 * A unified diff of two texts, or '' when they are equal. An absent side (undefined) is shown as
 * an empty file, as `diff -u /dev/null new` does.
 */
export function unifiedDiff(
  before: string | undefined,
  after: string | undefined,
  labels: DiffLabels,
  context = CONTEXT_LINES,
): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const edits = diffLines(a, b);
  if (edits.every((e) => e.op === ' ')) return '';
  const hunks = groupHunks(edits, context);
  const lines = [`--- ${labels.from}`, `+++ ${labels.to}`, ...hunks.flatMap(renderHunk)];
  return `${lines.join('\n')}\n`;
}

function splitLines(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

interface Hunk {
  edits: Edit[];
  /** 0-based positions of the hunk's first line in each side. */
  startA: number;
  startB: number;
}

/** Changes with `context` kept lines around them; changes closer than 2×context share a hunk. */
function groupHunks(edits: readonly Edit[], context: number): Hunk[] {
  const hunks: Hunk[] = [];
  const changed = edits.flatMap((e, i) => (e.op === ' ' ? [] : [i]));
  let i = 0;
  while (i < changed.length) {
    const first = changed[i] as number;
    let last = first;
    while (i + 1 < changed.length && (changed[i + 1] as number) - last - 1 <= 2 * context) {
      i++;
      last = changed[i] as number;
    }
    i++;
    const from = Math.max(0, first - context);
    const to = Math.min(edits.length, last + context + 1);
    let startA = 0;
    let startB = 0;
    for (const e of edits.slice(0, from)) {
      if (e.op !== '+') startA++;
      if (e.op !== '-') startB++;
    }
    hunks.push({ edits: edits.slice(from, to), startA, startB });
  }
  return hunks;
}

function renderHunk(h: Hunk): string[] {
  const lengthA = h.edits.filter((e) => e.op !== '+').length;
  const lengthB = h.edits.filter((e) => e.op !== '-').length;
  // An empty range starts at the line before it (0 for an empty side), as in GNU diff.
  const range = (start: number, length: number) =>
    `${length === 0 ? start : start + 1}${length === 1 ? '' : `,${length}`}`;
  return [
    `@@ -${range(h.startA, lengthA)} +${range(h.startB, lengthB)} @@`,
    ...h.edits.map((e) => `${e.op}${e.line}`),
  ];
}
