import { describe, expect, it } from 'vitest';
import { isTerminal, PHASES, TERMINAL_PHASES } from '../../../src/api/v1alpha1/index.ts';

describe('the terminal phases (api/v1alpha1/transaction.ts)', () => {
  it('are Committed, RolledBack and Failed, in the order of PHASES', () => {
    expect(PHASES.filter(isTerminal)).toEqual(['Committed', 'RolledBack', 'Failed']);
    expect([...TERMINAL_PHASES]).toEqual(PHASES.filter(isTerminal));
  });

  it('are no other string, nor a missing phase', () => {
    for (const phase of [undefined, '', 'committed', 'RollingBack', 'Rejected', 'Pending'])
      expect(isTerminal(phase)).toBe(false);
  });
});
