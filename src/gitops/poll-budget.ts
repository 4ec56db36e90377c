/**
 * How much of a watched branch one poll reads. A poll parses every directory its new commits
 * changed, and holds what it parsed until it has acted on all of it, so what it holds grows with
 * the push: 200,000 directories in one commit, or a thousand directories sharing one 1 MiB file
 * (one blob in Git, a thousand parses), would exhaust the process on every poll. The budget
 * stops a poll at a commit boundary: the commits read whole are acted on, the cursor moves to
 * the last of them, and the next poll (at once) reads on from there. Nothing is skipped.
 * Only a single commit larger than the whole budget cannot be split: that poll fails, naming the
 * commit, and stays at it (retried with backoff) until the limit is raised or the branch is
 * rewritten, because skipping it would lose the legitimate directories it carries.
 */

import { GitAccessError } from '../git/errors.ts';
import { GitObjectTooLargeError } from '../git/input-limits.ts';

const MiB = 1024 * 1024;

export interface PollBudget {
  /** Changed directories one poll reads (removed ones cost nothing and do not count). */
  maxDirectories: number;
  /** Bytes of directory files one poll reads, before parsing. */
  maxBytes: number;
}

/**
 * 1,000 directories, 16 MiB of their files. Parsed and held until the poll has acted on them, as
 * JSON text (held-transaction.ts), a byte of YAML takes about a byte of heap (0.6-1.1 measured:
 * short lists, `key: v` lines, long values; at most ~4 for text that is all escapes in a two-byte
 * string), so a poll holds ~16 MB, at most ~64 MB (docs/git.md, Limits), besides the parse of
 * the file at hand.
 */
export const DEFAULT_POLL_BUDGET: PollBudget = { maxDirectories: 1000, maxBytes: 16 * MiB };

/** One commit needs more than a whole poll may read. */
export class PollBudgetError extends Error {
  readonly commit: string;

  constructor(commit: string, detail: string) {
    super(`commit ${commit} ${detail}; it was not read, and the poll stays at it`);
    this.name = 'PollBudgetError';
    this.commit = commit;
  }
}

/** What one poll has read so far against its budget. */
export class PollMeter {
  readonly budget: PollBudget;
  #directories = 0;
  #bytes = 0;

  constructor(budget: PollBudget) {
    this.budget = budget;
  }

  /**
   * Whether a commit changing `directories` directories may be read in this poll. The first
   * commit of a poll that does not fit never will: PollBudgetError.
   */
  admits(commit: string, directories: number, first: boolean): boolean {
    if (this.#directories + directories <= this.budget.maxDirectories) {
      this.#directories += directories;
      return true;
    }
    if (!first) return false;
    throw new PollBudgetError(
      commit,
      `changes ${directories} transaction directories, more than the ${this.budget.maxDirectories} one poll reads`,
    );
  }

  /** Counts bytes read; false once past the budget (thrown for the poll's first commit). */
  spend(commit: string, bytes: number, first: boolean): boolean {
    this.#bytes += bytes;
    if (this.#bytes <= this.budget.maxBytes) return true;
    if (!first) return false;
    throw new PollBudgetError(
      commit,
      `changes directories holding more than the ${this.budget.maxBytes} bytes of files one poll reads`,
    );
  }
}

/**
 * A poll refused by a limit of this file or of src/git/input-limits.ts, as the poll error that
 * names the repository and the commit (logged, shown by /readyz, retried with backoff); anything
 * else unchanged.
 */
export function inputLimitError(error: unknown, repository: string, branch: string): unknown {
  if (error instanceof PollBudgetError)
    return new GitAccessError('too-large', `read ${repository} (${branch}): ${error.message}`, {
      repository,
      ref: branch,
      cause: error,
    });
  if (error instanceof GitObjectTooLargeError) {
    const at = error.commit ? ` at commit ${error.commit}` : '';
    return new GitAccessError(
      'too-large',
      `read ${repository} (${branch})${at}: ${error.message}, and the poll stays at this commit`,
      { repository, ref: branch, cause: error },
    );
  }
  return error;
}
