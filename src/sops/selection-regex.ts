/**
 * sops's encrypted_regex / unencrypted_regex, read from a pushed file and matched against every
 * key of it, without a backtracking engine: V8's RegExp takes exponential time on `^(a+)+$` and a
 * key of 30 `a`s and a `!` (seconds of the event loop every tenant shares, doubling per character).
 * sops compiles these with Go's regexp (RE2 syntax, linear time), so they are parsed here as RE2
 * reads them and run as a Thompson NFA: time linear in the key times the program, with the
 * program, the repeat counts and the total work per document bounded. RE2 has no backreferences
 * nor lookaround; what RE2 reads and this does not (Unicode classes `\pL`, `[[:alpha:]]`) is
 * refused by name.
 */

/** Longest selection regex read: sops's own are a few field names (`^(data|stringData)$`). */
export const MAX_SELECTION_REGEX_CHARS = 1024;
/** Repeat counts as Go's regexp bounds them (`a{1001}` does not compile there either). */
const MAX_REPEAT = 1000;
/** Instructions of the compiled program (a repeat count copies its operand). */
export const MAX_PROGRAM = 4096;
/**
 * NFA steps over all the keys of one document: far more than a real file takes (a Secret with a
 * hundred keys and `^(data|stringData)$`: a few thousand), and some milliseconds of the event loop
 * (a source's render may read many files, each with its own budget).
 */
export const MAX_MATCH_STEPS = 1_000_000;

type CharTest = (c: string) => boolean;
/** An assertion, given the characters before and after the position (undefined at an end). */
type AssertTest = (before: string | undefined, after: string | undefined) => boolean;

type Node =
  | { k: 'char'; test: CharTest }
  | { k: 'cat'; items: Node[] }
  | { k: 'alt'; items: Node[] }
  | { k: 'rep'; node: Node; min: number; max: number }
  | { k: 'assert'; test: AssertTest };

type Inst =
  | { op: 'char'; test: CharTest; out: number }
  | { op: 'assert'; test: AssertTest; out: number }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; out: number }
  | { op: 'match' };

interface Flags {
  i: boolean;
  s: boolean;
  m: boolean;
}

/** Why a selection regex is refused, or its document's matching budget is spent. */
export class SelectionRegexError extends Error {}

/** Counts the NFA steps of every match made for one document; throws SelectionRegexError past the bound. */
export class MatchBudget {
  #steps = 0;
  spend(steps: number): void {
    this.#steps += steps;
    if (this.#steps > MAX_MATCH_STEPS)
      throw new SelectionRegexError(
        `matching it against this file's keys takes more than ${MAX_MATCH_STEPS} steps: use a simpler regular expression`,
      );
  }
}

/**
 * A matcher (Go's MatchString: does the regex match anywhere in `key`), or why `source` is refused.
 * The matcher throws SelectionRegexError when the document's budget is spent.
 */
export function compileSelectionRegex(
  source: string,
  budget: MatchBudget,
): ((key: string) => boolean) | { refused: string } {
  if (source.length > MAX_SELECTION_REGEX_CHARS)
    return { refused: `is ${source.length} characters: at most ${MAX_SELECTION_REGEX_CHARS} are read` };
  let program: Inst[];
  try {
    program = compile(new Parser(source).parse());
  } catch (e) {
    if (e instanceof SelectionRegexError) return { refused: e.message };
    throw e;
  }
  const seen = new Map<string, boolean>();
  return (key) => {
    let result = seen.get(key);
    if (result === undefined) {
      result = run(program, Array.from(key), budget);
      seen.set(key, result);
    }
    return result;
  };
}

// ---- parsing (RE2 syntax) ----

const isWordChar = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Za-z_]$/.test(c);
const PERL_CLASSES: Record<string, CharTest> = {
  d: (c) => c >= '0' && c <= '9',
  w: (c) => isWordChar(c),
  s: (c) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r', // Go's \s: no \v
};
const CONTROL_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07' };

class Parser {
  readonly #chars: string[];
  #pos = 0;

  constructor(source: string) {
    this.#chars = Array.from(source);
  }

  parse(): Node {
    const node = this.#alternation({ i: false, s: false, m: false });
    if (this.#pos < this.#chars.length) throw new SelectionRegexError('has an unmatched ")"');
    return node;
  }

  #peek(offset = 0): string | undefined {
    return this.#chars[this.#pos + offset];
  }

  #alternation(flags: Flags): Node {
    const items = [this.#concatenation(flags)];
    while (this.#peek() === '|') {
      this.#pos++;
      items.push(this.#concatenation(flags));
    }
    return items.length === 1 ? (items[0] as Node) : { k: 'alt', items };
  }

  #concatenation(flags: Flags): Node {
    const items: Node[] = [];
    for (let c = this.#peek(); c !== undefined && c !== '|' && c !== ')'; c = this.#peek()) {
      // `(?i)` changes the flags for the rest of the enclosing group.
      if (c === '(' && this.#peek(1) === '?' && this.#flagGroup(flags)) continue;
      const atom = this.#atom(flags);
      items.push(this.#repetition(atom));
    }
    return { k: 'cat', items };
  }

  /** Reads `(?flags)` into `flags` (true), or leaves anything else for #atom (false). */
  #flagGroup(flags: Flags): boolean {
    let j = this.#pos + 2;
    while (/^[imsU-]$/.test(this.#chars[j] ?? '')) j++;
    if (this.#chars[j] !== ')' || j === this.#pos + 2) return false;
    Object.assign(flags, this.#readFlags(this.#chars.slice(this.#pos + 2, j), flags));
    this.#pos = j + 1;
    return true;
  }

  #readFlags(letters: string[], flags: Flags): Flags {
    const out = { ...flags };
    let on = true;
    for (const l of letters) {
      if (l === '-') on = false;
      else if (l === 'i' || l === 's' || l === 'm') out[l] = on;
      // U (ungreedy) changes which match is found, not whether one is.
    }
    return out;
  }

  #atom(flags: Flags): Node {
    const c = this.#peek() as string;
    this.#pos++;
    switch (c) {
      case '(':
        return this.#group(flags);
      case '[':
        return this.#class(flags);
      case '.':
        return { k: 'char', test: flags.s ? () => true : (x) => x !== '\n' };
      case '^':
        return { k: 'assert', test: flags.m ? (b) => b === undefined || b === '\n' : (b) => b === undefined };
      case '$':
        return {
          k: 'assert',
          test: flags.m ? (_, a) => a === undefined || a === '\n' : (_, a) => a === undefined,
        };
      case '\\':
        return this.#escape(flags);
      case '*':
      case '+':
      case '?':
        throw new SelectionRegexError(`has a "${c}" with nothing to repeat`);
      default:
        return literal(c, flags);
    }
  }

  #group(outer: Flags): Node {
    let flags = { ...outer };
    if (this.#peek() === '?') {
      const rest = this.#chars.slice(this.#pos + 1, this.#pos + 3).join('');
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!')
        throw new SelectionRegexError('has a lookaround assertion, which sops (Go regexp) does not read');
      if (rest === 'P<' || rest.startsWith('<')) {
        const close = this.#chars.indexOf('>', this.#pos);
        if (close < 0) throw new SelectionRegexError('has an unterminated group name');
        this.#pos = close + 1;
      } else {
        let j = this.#pos + 1;
        while (/^[imsU-]$/.test(this.#chars[j] ?? '')) j++;
        if (this.#chars[j] !== ':') throw new SelectionRegexError('has a "(?" group Janus does not read');
        flags = this.#readFlags(this.#chars.slice(this.#pos + 1, j), flags);
        this.#pos = j + 1;
      }
    }
    const node = this.#alternation(flags);
    if (this.#peek() !== ')') throw new SelectionRegexError('has an unclosed "("');
    this.#pos++;
    return node;
  }

  #repetition(atom: Node): Node {
    let node = atom;
    let repeated = false;
    for (;;) {
      const c = this.#peek();
      let bounds: [number, number] | undefined;
      if (c === '*') bounds = [0, Infinity];
      else if (c === '+') bounds = [1, Infinity];
      else if (c === '?') bounds = [0, 1];
      else if (c === '{') bounds = this.#counted();
      if (!bounds) return node;
      if (c !== '{') this.#pos++;
      // Go refuses `a**` too ("invalid nested repetition operator").
      if (repeated) throw new SelectionRegexError('has a repetition of a repetition (e.g. "a**")');
      repeated = true;
      if (this.#peek() === '?') this.#pos++; // lazy: the same strings match
      node = { k: 'rep', node, min: bounds[0], max: bounds[1] };
    }
  }

  /** `{n}`, `{n,}`, `{n,m}` (consumed), or undefined: then `{` is a literal, as in Go. */
  #counted(): [number, number] | undefined {
    const rest = this.#chars.slice(this.#pos, this.#pos + 24).join('');
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT) || max < min)
      throw new SelectionRegexError(`has a repeat count ${m[0]} outside 0 to ${MAX_REPEAT}`);
    this.#pos += Array.from(m[0]).length;
    return [min, max];
  }

  #escape(flags: Flags): Node {
    const c = this.#peek();
    if (c === undefined) throw new SelectionRegexError('ends with a "\\"');
    this.#pos++;
    const test = this.#classEscape(c);
    if (test) return { k: 'char', test };
    switch (c) {
      case 'A':
        return { k: 'assert', test: (b) => b === undefined };
      case 'z':
        return { k: 'assert', test: (_, a) => a === undefined };
      case 'b':
        return { k: 'assert', test: (b, a) => isWordChar(b) !== isWordChar(a) };
      case 'B':
        return { k: 'assert', test: (b, a) => isWordChar(b) === isWordChar(a) };
      case 'Q': {
        let end = this.#pos;
        while (end < this.#chars.length && !(this.#chars[end] === '\\' && this.#chars[end + 1] === 'E'))
          end++;
        const text = this.#chars.slice(this.#pos, end);
        this.#pos = Math.min(end + 2, this.#chars.length);
        return { k: 'cat', items: text.map((x) => literal(x, flags)) };
      }
      default:
        return literal(this.#escapedChar(c), flags);
    }
  }

  /** `\d` and its kin (in or out of a class). */
  #classEscape(c: string): CharTest | undefined {
    const positive = PERL_CLASSES[c];
    if (positive) return positive;
    const negated = PERL_CLASSES[c.toLowerCase()];
    if (negated && c !== c.toLowerCase()) return (x) => !negated(x);
    if (c === 'p' || c === 'P')
      throw new SelectionRegexError(
        'has a Unicode class (\\p), which Janus does not read: use a character class',
      );
    return undefined;
  }

  /** The character an escape stands for: punctuation as it is, a control letter, `\x41`. */
  #escapedChar(c: string): string {
    const control = CONTROL_ESCAPES[c];
    if (control) return control;
    if (c === 'x') {
      const rest = this.#chars.slice(this.#pos, this.#pos + 10).join('');
      const m = /^(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{2}))/.exec(rest);
      if (!m) throw new SelectionRegexError('has a malformed "\\x" escape');
      this.#pos += m[0].length;
      return String.fromCodePoint(Number.parseInt(m[1] ?? m[2] ?? '0', 16));
    }
    if (/^[0-9]$/.test(c))
      throw new SelectionRegexError('has a backreference or octal escape, which Janus does not read');
    if (/^[A-Za-z]$/.test(c))
      throw new SelectionRegexError(`has an escape "\\${c}" Go's regexp does not read`);
    return c;
  }

  #class(flags: Flags): Node {
    const tests: CharTest[] = [];
    const negated = this.#peek() === '^';
    if (negated) this.#pos++;
    for (let first = true; first || this.#peek() !== ']'; first = false) tests.push(this.#classMember());
    this.#pos++;
    const any: CharTest = (x) => tests.some((t) => t(x));
    const folded = flags.i ? caseFolded(any) : any;
    return { k: 'char', test: negated ? (x) => !folded(x) : folded };
  }

  /** One member of a class: a character, a range `a-z`, or `\d` and its kin. */
  #classMember(): CharTest {
    const c = this.#peek();
    if (c === undefined) throw new SelectionRegexError('has an unclosed "["');
    if (c === '[' && this.#peek(1) === ':')
      throw new SelectionRegexError('has a POSIX class ([:name:]), which Janus does not read: use a range');
    const low = this.#classChar();
    if (typeof low !== 'string') return low;
    if (this.#peek() !== '-' || this.#peek(1) === ']' || this.#peek(1) === undefined) return (x) => x === low;
    this.#pos++;
    const high = this.#classChar();
    if (typeof high !== 'string') throw new SelectionRegexError('has a range that ends in a class');
    const [lo, hi] = [low.codePointAt(0) ?? 0, high.codePointAt(0) ?? 0];
    if (hi < lo) throw new SelectionRegexError(`has a range ${low}-${high} that runs backwards`);
    return (x) => {
      const p = x.codePointAt(0) ?? -1;
      return p >= lo && p <= hi;
    };
  }

  /** A character of a class (escapes read), or the test of a `\d` inside it. */
  #classChar(): string | CharTest {
    const c = this.#peek() as string;
    this.#pos++;
    if (c !== '\\') return c;
    const e = this.#peek();
    if (e === undefined) throw new SelectionRegexError('ends with a "\\"');
    this.#pos++;
    return this.#classEscape(e) ?? this.#escapedChar(e);
  }
}

function literal(c: string, flags: Flags): Node {
  return { k: 'char', test: flags.i ? caseFolded((x) => x === c) : (x) => x === c };
}

function caseFolded(test: CharTest): CharTest {
  return (x) => test(x) || test(x.toLowerCase()) || test(x.toUpperCase());
}

// ---- compiling and running (Thompson's construction, run as a set of states) ----

function compile(root: Node): Inst[] {
  const program: Inst[] = [];
  const push = (inst: Inst): number => {
    if (program.length >= MAX_PROGRAM)
      throw new SelectionRegexError(
        `compiles to more than ${MAX_PROGRAM} instructions (repeat counts copy their operand)`,
      );
    program.push(inst);
    return program.length - 1;
  };
  const emit = (node: Node): void => {
    switch (node.k) {
      case 'char':
        push({ op: 'char', test: node.test, out: program.length + 1 });
        return;
      case 'assert':
        push({ op: 'assert', test: node.test, out: program.length + 1 });
        return;
      case 'cat':
        for (const item of node.items) emit(item);
        return;
      case 'alt': {
        const jumps: Extract<Inst, { op: 'jmp' }>[] = [];
        node.items.forEach((item, i) => {
          if (i === node.items.length - 1) {
            emit(item);
            return;
          }
          const split = { op: 'split' as const, x: program.length + 1, y: 0 };
          push(split);
          emit(item);
          const jmp = { op: 'jmp' as const, out: 0 };
          push(jmp);
          jumps.push(jmp);
          split.y = program.length;
        });
        for (const j of jumps) j.out = program.length;
        return;
      }
      case 'rep': {
        for (let i = 0; i < node.min; i++) emit(node.node);
        if (node.max === Infinity) {
          const loop = program.length;
          const split = { op: 'split' as const, x: loop + 1, y: 0 };
          push(split);
          emit(node.node);
          push({ op: 'jmp', out: loop });
          split.y = program.length;
          return;
        }
        const splits: Extract<Inst, { op: 'split' }>[] = [];
        for (let i = node.min; i < node.max; i++) {
          const split = { op: 'split' as const, x: program.length + 1, y: 0 };
          push(split);
          splits.push(split);
          emit(node.node);
        }
        for (const s of splits) s.y = program.length;
        return;
      }
    }
  };
  emit(root);
  push({ op: 'match' });
  return program;
}

/** Whether `program` matches anywhere in `chars`: every state followed at once, each at most once a step. */
function run(program: Inst[], chars: string[], budget: MatchBudget): boolean {
  const mark = new Int32Array(program.length).fill(-1);
  let current: number[] = [];
  let next: number[] = [];
  let steps = 0;
  const stack: number[] = [];
  /** Adds the states reachable from `start` without reading a character at position `pos`; true at a match. */
  const add = (list: number[], start: number, pos: number): boolean => {
    stack.push(start);
    while (stack.length > 0) {
      const pc = stack.pop() as number;
      if (mark[pc] === pos) continue;
      mark[pc] = pos;
      steps++;
      const inst = program[pc] as Inst;
      switch (inst.op) {
        case 'char':
          list.push(pc);
          break;
        case 'jmp':
          stack.push(inst.out);
          break;
        case 'split':
          stack.push(inst.y, inst.x);
          break;
        case 'assert':
          if (inst.test(chars[pos - 1], chars[pos])) stack.push(inst.out);
          break;
        case 'match':
          stack.length = 0;
          return true;
      }
    }
    return false;
  };
  try {
    for (let pos = 0; ; pos++) {
      // A match may start anywhere (Go's MatchString is unanchored).
      if (add(current, 0, pos)) return true;
      if (pos === chars.length) return false;
      const c = chars[pos] as string;
      next.length = 0;
      for (const pc of current) {
        const inst = program[pc] as Extract<Inst, { op: 'char' }>;
        steps++;
        if (inst.test(c) && add(next, inst.out, pos + 1)) return true;
      }
      [current, next] = [next, current];
      if (steps > 10_000) {
        budget.spend(steps);
        steps = 0;
      }
    }
  } finally {
    budget.spend(steps);
  }
}
