/**
 * sops's encrypted_regex / unencrypted_regex, read from a pushed file and matched against every
 * key of it, without a backtracking engine: V8's RegExp takes exponential time on `^(a+)+$` and a
 * key of 30 `a`s and a `!` (seconds of the event loop every tenant shares, doubling per character).
 * sops compiles these with Go's regexp; re2js is RE2 in JavaScript, the same syntax (no
 * backreferences, no lookaround; Go's repeat bound of 1,000) and linear-time matching. Linear is
 * still keys × program: the work of one document is bounded too.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';

type Re2js = typeof import('re2js');
let loaded: Re2js | undefined;
/** Loaded on the first selection regex, not at start: 4.3 MiB resident every controller would carry. */
const re2js = (): Re2js => {
  loaded ??= createRequire(import.meta.url)('re2js') as Re2js;
  return loaded;
};

/** Longest selection regex read: sops's own are a few field names (`^(data|stringData)$`). */
export const MAX_SELECTION_REGEX_CHARS = 1024;
/**
 * Characters of keys × instructions of the program, over all the matches made for one document:
 * a Secret of a hundred keys with `^(data|stringData)$` is about 40,000; a values file of 5,000
 * keys and a regex of a few field names a few million. At the bound, about 0.1 s of the event loop
 * (re2js runs ~13 ns per unit here: a program of 2,004 instructions over 200 keys of 1,000
 * characters took 5.3 s without it).
 */
export const MAX_MATCH_WORK = 10_000_000;

/** Why a selection regex is refused, or its document's matching budget is spent. */
export class SelectionRegexError extends Error {}

/** Counts the work of every match made for one document; throws SelectionRegexError past the bound. */
export class MatchBudget {
  #work = 0;
  spend(work: number): void {
    this.#work += work;
    if (this.#work > MAX_MATCH_WORK)
      throw new SelectionRegexError(
        `matching it against this file's keys takes more than ${MAX_MATCH_WORK} steps: use a simpler regular expression`,
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
  const { RE2JS: Pattern, RE2JSException } = re2js();
  let regex: RE2JS;
  try {
    regex = Pattern.compile(source);
  } catch (e) {
    if (e instanceof RE2JSException)
      return { refused: `is not a regular expression sops reads: ${e.message}` };
    throw e;
  }
  const size = regex.programSize();
  // A deep path tests its parent keys again at every leaf: each key is matched once.
  const seen = new Map<string, boolean>();
  return (key) => {
    let found = seen.get(key);
    if (found === undefined) {
      budget.spend((key.length + 1) * size);
      found = regex.matcher(key).find();
      seen.set(key, found);
    }
    return found;
  };
}
