/**
 * The shell commands of Markdown documentation: what a reader would copy out of a fenced ```sh
 * block. Pure; test/cluster/docs/commands.test.ts decides for each command whether it runs
 * against the test cluster or is skipped for a stated reason.
 */

/** Info strings whose blocks are shell commands. `console` blocks hold commands after a `$ ` prompt. */
export const SHELL_LANGUAGES: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'shell',
  'zsh',
  'console',
  'shell-session',
]);
const PROMPTED = new Set(['console', 'shell-session']);

export interface ShellBlock {
  /** The file, as the caller named it. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The first word of the info string: sh, bash, … */
  lang: string;
  /** The block's lines, with the fence's indentation removed. */
  lines: string[];
}

export interface DocCommand {
  file: string;
  /** 1-based line on which the command starts. */
  line: number;
  /** The command as a reader pastes it: its lines, backslash continuations and comments included. */
  source: string;
  /** On one line: continuations joined, comments dropped, blanks collapsed. Decisions match this. */
  text: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;

/** The fenced blocks of `markdown` whose language is a shell. */
export function shellBlocks(markdown: string, file: string): ShellBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: ShellBlock[] = [];
  let open: { indent: number; fence: string; lang: string; line: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    if (open) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(text)?.[1] ?? '';
      if (close[0] === open.fence[0] && close.length >= open.fence.length) {
        if (SHELL_LANGUAGES.has(open.lang))
          blocks.push({ file, line: open.line, lang: open.lang, lines: open.body });
        open = undefined;
      } else {
        open.body.push(text.replace(new RegExp(`^ {0,${open.indent}}`), ''));
      }
      return;
    }
    const fence = FENCE.exec(text);
    if (fence) {
      open = {
        indent: fence[1]?.length ?? 0,
        fence: fence[2] ?? '```',
        lang: (fence[3] ?? '').toLowerCase(),
        line: i + 1,
        body: [],
      };
    }
  });
  // An unclosed fence runs to the end of the document, as CommonMark has it.
  if (open && SHELL_LANGUAGES.has(open.lang))
    blocks.push({ file, line: open.line, lang: open.lang, lines: open.body });
  return blocks;
}

interface Scan {
  /** The line without its comment. */
  code: string;
  /** Ends with an unquoted backslash: the command goes on. */
  escapedNewline: boolean;
  /** The quote still open at the end of the line. */
  quote: Quote;
}

/** `<a placeholder>` in prose words: not a redirection, and its apostrophes open no quote. */
const PLACEHOLDER = /^<[A-Za-z][\w'’ -]* [\w'’ -]*>/;

type Quote = "'" | '"' | undefined;

/** Outside quotes at `i`: the next piece of the line and the quote it opens; undefined at a comment. */
function unquoted(line: string, i: number): { piece: string; opens: Quote } | undefined {
  const c = line[i] as string;
  if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return undefined;
  // A placeholder for the reader to fill in, e.g. <the Transaction's uid>: one opaque word.
  const placeholder = c === '<' ? PLACEHOLDER.exec(line.slice(i)) : null;
  if (placeholder) return { piece: placeholder[0], opens: undefined };
  return { piece: c, opens: c === "'" || c === '"' ? c : undefined };
}

/** One line of shell, given the quote left open by the previous one. */
function scanLine(line: string, quote: Quote): Scan {
  let code = '';
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === '\\' && quote !== "'") {
      if (i === line.length - 1) return { code, escapedNewline: true, quote };
      code += line.slice(i, i + 2);
      i += 2;
    } else if (quote !== undefined) {
      code += c;
      if (c === quote) quote = undefined;
      i++;
    } else {
      const next = unquoted(line, i);
      if (!next) break;
      code += next.piece;
      quote = next.opens;
      i += next.piece.length;
    }
  }
  return { code, escapedNewline: false, quote };
}

/** The commands of one block, each with its continuation lines. Blank and comment lines are not commands. */
export function commandsOf(block: ShellBlock): DocCommand[] {
  const prompted = PROMPTED.has(block.lang);
  const out: DocCommand[] = [];
  let current: { line: number; source: string[]; text: string[] } | undefined;
  let quote: Quote;
  let heredoc: string | undefined;
  const finish = () => {
    if (!current) return;
    const text = current.text.join(' ').replace(/\s+/g, ' ').trim();
    if (text !== '')
      out.push({ file: block.file, line: current.line, source: current.source.join('\n'), text });
    current = undefined;
  };
  block.lines.forEach((raw, i) => {
    const line = block.line + 1 + i;
    if (current && heredoc !== undefined) {
      current.source.push(raw);
      current.text.push(raw);
      if (raw.replace(/^\t+/, '') === heredoc) {
        heredoc = undefined;
        finish();
      }
      return;
    }
    let body = raw;
    if (!current) {
      if (prompted) {
        const prompt = /^\s*\$ (.*)$/.exec(raw);
        if (!prompt) return; // output
        body = prompt[1] ?? '';
      }
      current = { line, source: [], text: [] };
    }
    current.source.push(body);
    const scan = scanLine(body, quote);
    quote = scan.quote;
    current.text.push(scan.code);
    const here = /<<-?\s*(['"]?)([A-Za-z_][\w-]*)\1/.exec(scan.code);
    if (here?.[2] && !scan.escapedNewline && quote === undefined) {
      heredoc = here[2];
      return;
    }
    const continues = scan.escapedNewline || quote !== undefined || /(&&|\|\||\|)\s*$/.test(scan.code);
    if (!continues) finish();
  });
  finish();
  return out;
}

/** Every shell command of these Markdown documents, in order. */
export function docCommands(docs: ReadonlyArray<{ file: string; markdown: string }>): DocCommand[] {
  return docs.flatMap(({ file, markdown }) => shellBlocks(markdown, file).flatMap(commandsOf));
}
