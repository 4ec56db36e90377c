import { describe, expect, it } from 'vitest';
import type { CommitInfo } from '../../../src/git/commit-info.ts';
import { formatCommitMessage } from '../../../src/results/commit-message.ts';
import { historyEntryOf, matchesTransaction } from '../../../src/results/history.ts';

const who = { name: 'janus', email: 'janus@example.com', timestamp: 1_795_000_000, timezoneOffset: 0 };
const commit = (message: string): CommitInfo => ({
  oid: 'c'.repeat(40),
  tree: 't'.repeat(40),
  parents: [],
  message,
  author: who,
  committer: who,
});

describe('historyEntryOf', () => {
  it('reads a result commit: transaction, phase, the detail of its subject, source, time', () => {
    const message = formatCommitMessage('shop/deploy-v2: Committed (3/3 changes)', ['body'], {
      transaction: 'shop/deploy-v2',
      phase: 'Committed',
      source: 'a'.repeat(40),
    });
    expect(historyEntryOf(commit(`${message}Janus-Result: r-1\n`))).toEqual({
      record: 'c'.repeat(40),
      recordedAt: '2026-11-18T11:06:40Z',
      transaction: 'shop/deploy-v2',
      phase: 'Committed',
      detail: '3/3 changes',
      source: 'a'.repeat(40),
    });
  });

  it('keeps a detail that has parentheses of its own, and does without source or detail', () => {
    const message = formatCommitMessage('shop/web: RolledBack (0/2 changes (health check failed))', [], {
      transaction: 'shop/web',
      phase: 'RolledBack',
    });
    expect(historyEntryOf(commit(message))).toMatchObject({
      detail: '0/2 changes (health check failed)',
    });
    const bare = formatCommitMessage('shop/web: Rejected', [], {
      transaction: 'shop/web',
      phase: 'Rejected',
    });
    const entry = historyEntryOf(commit(bare));
    expect(entry?.detail).toBeUndefined();
    expect(entry?.source).toBeUndefined();
  });

  it('keeps a subject that does not start with the phase whole', () => {
    const message = formatCommitMessage('shop/web: edit ignored (already materialized)', [], {
      transaction: 'shop/web',
      phase: 'Ignored',
    });
    expect(historyEntryOf(commit(message))?.detail).toBe('edit ignored (already materialized)');
  });

  it('turns control characters from the message into "?", so no escape sequence reaches a terminal', () => {
    const message = formatCommitMessage('shop/web: Committed (\u001b[2J\u001b]0;owned\u0007)', [], {
      transaction: 'shop/web',
      phase: 'Committed',
    });
    const entry = historyEntryOf(
      commit(message.replace('Janus-Phase: Committed', 'Janus-Phase: Commit\u001b[31mted')),
    );
    expect(entry?.detail).toBe('Committed (?[2J?]0;owned?)');
    expect(entry?.phase).toBe('Commit?[31mted');
  });

  it('skips commits that record no transaction', () => {
    expect(historyEntryOf(commit('Record 3 existing directories as baseline\n'))).toBeUndefined();
    expect(historyEntryOf(commit('x\n\nJanus-Phase: Committed\n'))).toBeUndefined();
  });
});

describe('matchesTransaction', () => {
  const entry = { record: '', recordedAt: '', transaction: 'shop/deploy-v2', phase: 'Committed' };
  it.each([
    [undefined, true],
    ['deploy-v2', true],
    ['shop/deploy-v2', true],
    ['payments/deploy-v2', false],
    ['v2', false],
    ['deploy', false],
  ])('%s matches shop/deploy-v2: %s', (name, expected) => {
    expect(matchesTransaction(entry, name)).toBe(expected);
  });
});
