import { describe, expect, it } from 'vitest';
import { parseSelection, standingItems } from '../../../src/cli/recover-plan.ts';
import { item, txn } from './fixtures.ts';

const failed = txn({
  phase: 'Failed',
  items: [
    item(0, { committed: true, rolledBack: true }),
    item(1, {
      committed: true,
      conflict: true,
      error: 'web changed',
      lease: 'shop/janus-lock-deployment-web-1',
    }),
    item(2, { committed: true, error: 'Forbidden' }),
  ],
});

describe('standingItems', () => {
  it('lists committed changes not rolled back, conflicts marked', () => {
    expect(standingItems(failed).map((s) => [s.index, s.conflict, s.description, s.lease])).toEqual([
      [1, true, 'apps/v1 Deployment shop/web', 'shop/janus-lock-deployment-web-1'],
      [2, false, 'v1 Secret shop/web-credentials', undefined],
    ]);
  });
});

describe('parseSelection', () => {
  const standing = standingItems(failed);

  it('takes "all" as every conflict, and numbers as given', () => {
    expect(parseSelection('all', standing)).toEqual([1]);
    expect(parseSelection(' 1 , 1', standing)).toEqual([1]);
  });

  it('refuses what it cannot restore, saying why', () => {
    expect(() => parseSelection('0', standing)).toThrow(/change 0 is not left standing .*standing: 1, 2/);
    expect(() => parseSelection('2', standing)).toThrow(
      /change 2 is not a conflict: its undo was refused \(Forbidden\)/,
    );
    expect(() => parseSelection('one', standing)).toThrow(/expected "all" or change numbers/);
    expect(() => parseSelection('1,', standing)).toThrow(/expected "all"/);
    expect(() => parseSelection('all', standingItems(txn({ phase: 'Failed', items: [] })))).toThrow(
      /no change is in conflict/,
    );
  });
});
