/**
 * Commit messages on the results branch: a subject naming the transaction and its phase, a short
 * body, and trailers that tools (and `git log --format=%(trailers)`) can read.
 */

export const TRAILER_TRANSACTION = 'Janus-Transaction';
export const TRAILER_PHASE = 'Janus-Phase';
export const TRAILER_SOURCE = 'Janus-Source';
/** The Source (`<namespace>/<name>`) whose commit the record is about (docs/sources.md). */
export const TRAILER_SOURCE_NAME = 'Janus-Source-Name';
/** The unique id of the result a commit carries (ResultRecord.id). */
export const TRAILER_RESULT = 'Janus-Result';

/** Adds a trailer to a message: to its trailer paragraph, or as a new one if it has none. */
export function withTrailer(message: string, key: string, value: string): string {
  const text = message.replace(/\s+$/, '');
  const paragraphs = text.split(/\n\s*\n/);
  const last = paragraphs.length > 1 ? (paragraphs.at(-1) ?? '') : '';
  const endsInTrailers = last !== '' && last.split('\n').every((line) => TRAILER_LINE.test(line));
  return `${text}${endsInTrailers ? '\n' : '\n\n'}${key}: ${oneLine(value)}\n`;
}

const TRAILER_LINE = /^([A-Za-z][A-Za-z0-9-]*):\s*(.*)$/;

export interface ResultTrailers {
  /** "<namespace>/<name>" */
  transaction: string;
  /** A Transaction phase, or Rejected / Ignored for directories that never became one. */
  phase: string;
  /** The source commit (40 hex), when known. */
  source?: string;
  /** A source's commit: the Source, `<namespace>/<name>`. */
  sourceName?: string | undefined;
}

const SUBJECT_MAX = 100;

export function formatCommitMessage(
  subject: string,
  body: readonly string[],
  trailers: ResultTrailers,
): string {
  const lines = [oneLine(subject, SUBJECT_MAX), ''];
  const paragraphs = body.map((p) => p.trim()).filter((p) => p !== '');
  if (paragraphs.length > 0) lines.push(paragraphs.join('\n\n'), '');
  lines.push(`${TRAILER_TRANSACTION}: ${oneLine(trailers.transaction)}`);
  lines.push(`${TRAILER_PHASE}: ${oneLine(trailers.phase)}`);
  if (trailers.source !== undefined) lines.push(`${TRAILER_SOURCE}: ${oneLine(trailers.source)}`);
  if (trailers.sourceName !== undefined)
    lines.push(`${TRAILER_SOURCE_NAME}: ${oneLine(trailers.sourceName)}`);
  return `${lines.join('\n')}\n`;
}

/** Trailers of a commit message: "Key: value" lines of its last paragraph. */
export function parseTrailers(message: string): Record<string, string> {
  const paragraphs = message.trim().split(/\n\s*\n/);
  const last = paragraphs.length > 1 ? (paragraphs[paragraphs.length - 1] ?? '') : '';
  const trailers: Record<string, string> = {};
  for (const line of last.split('\n')) {
    const match = TRAILER_LINE.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) trailers[match[1]] = match[2];
  }
  return trailers;
}

/** Collapses whitespace so a value cannot break the subject or a trailer line. */
function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
