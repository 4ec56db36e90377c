/** `janus status` prints what targets, API errors and Events say, never their control characters. */
import { describe, expect, it } from 'vitest';
import { renderTransactionDetail, renderTransactionTable } from '../../../src/cli/status-view.ts';
import { item, NOW, txn } from './fixtures.ts';

// Clear the screen, retitle the window, and overwrite the line with something reassuring.
const HOSTILE = 'pull failed\u001b[2J\u001b]0;owned\u0007\rall healthy\u009b31m';
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('janus status and foreign strings', () => {
  const failed = txn({
    phase: 'Failed',
    items: [
      item(0, { committed: true, error: HOSTILE }),
      item(1, { committed: true, health: { status: 'Failed', reason: 'ErrImagePull', message: HOSTILE } }),
    ],
    conditions: [{ type: 'Ready', reason: 'RollbackFailed', message: HOSTILE }],
  });

  it('shows the detail without a control character, newlines kept', () => {
    const text = renderTransactionDetail(
      failed,
      [{ type: 'Warning', reason: 'RollbackFailed', message: HOSTILE, count: 1 }],
      NOW,
    );
    expect(text).toContain('pull failed?[2J?]0;owned??all healthy?31m');
    expect(text.replaceAll('\n', '')).not.toMatch(CONTROL);
    expect(text.split('\n').length).toBeGreaterThan(10);
  });

  it('shows the table without one either', () => {
    const odd = txn({ phase: 'Failed', conditions: [{ type: 'Ready', reason: `Odd${'\u001b[5m'}` }] });
    expect(renderTransactionTable([odd], NOW, '')).not.toMatch(CONTROL);
  });
});
