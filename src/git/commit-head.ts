/**
 * A commit read from the start of its object only (its headers and the beginning of its
 * message), for commits too large to read whole: see GIT_INPUT_LIMITS.commitReadBytes.
 */

import type { CommitInfo, Signature } from './commit-info.ts';
import { GitObjectTooLargeError } from './input-limits.ts';

/** Marks a message cut at the read limit. */
export const TRUNCATED_MESSAGE = '\n[… message truncated by Janus: the commit is larger than it reads]\n';

/**
 * Parses the first bytes of commit `oid` (`start`, of `size` in all) the way isomorphic-git
 * parses a whole one. Throws GitObjectTooLargeError when even its headers do not fit.
 */
export function parseCommitStart(oid: string, start: Buffer, size: number, limit: number): CommitInfo {
  const text = start.toString('utf8');
  const end = text.indexOf('\n\n');
  if (end < 0) throw new GitObjectTooLargeError('commit', oid, size, limit, 'its headers may take');
  let tree: string | undefined;
  const parents: string[] = [];
  let author: Signature | undefined;
  let committer: Signature | undefined;
  for (const line of text.slice(0, end).split('\n')) {
    const space = line.indexOf(' ');
    const [key, value] = [line.slice(0, space), line.slice(space + 1)];
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = signature(value);
    else if (key === 'committer') committer = signature(value);
  }
  if (!tree || !author || !committer) throw new Error(`commit ${oid} has no tree, author or committer`);
  const message = text.slice(end + 2);
  return {
    oid,
    tree,
    parents,
    message: start.length < size ? `${message}${TRUNCATED_MESSAGE}` : message,
    author,
    committer,
  };
}

/** `Name <email> 1700000000 +0100`, with isomorphic-git's sign for the offset (minutes west). */
function signature(value: string): Signature | undefined {
  const match = /^(.*) <(.*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(value);
  if (!match) return undefined;
  const [, name = '', email = '', timestamp, sign, hours, minutes] = match;
  const east = Number(hours) * 60 + Number(minutes);
  return {
    name,
    email,
    timestamp: Number(timestamp),
    timezoneOffset: east === 0 ? 0 : sign === '+' ? -east : east,
  };
}
