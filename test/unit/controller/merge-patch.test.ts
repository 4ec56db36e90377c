import { describe, expect, it } from 'vitest';
import { mergePatchOf } from '../../../src/controller/context.ts';
import { mergePatch as apply } from '../../support/fake-api.ts';

describe('mergePatchOf', () => {
  it('turns before into after, removing nested fields a new value no longer has', () => {
    const before = {
      phase: 'RollingBack',
      health: { check: 'Commit', startedAt: 't0', completedAt: 't1', result: 'Unhealthy' },
      items: [{ committed: true, health: { status: 'Failed' } }],
      deadline: 'd',
    };
    const after = {
      phase: 'RollingBack',
      health: { check: 'Rollback', startedAt: 't2', deadline: 't3' },
      items: [{ committed: true, rolledBack: true }],
    };
    const patch = mergePatchOf(before, after);
    expect(apply(before, patch)).toEqual(after);
    expect(patch.health).toEqual({
      check: 'Rollback',
      startedAt: 't2',
      deadline: 't3',
      completedAt: null,
      result: null,
    });
    expect(patch.deadline).toBeNull();
  });

  it('replaces lists whole and leaves unchanged fields as they are', () => {
    const before = { items: [1, 2, 3], progress: '1/3' };
    const after = { items: [1], progress: '1/3' };
    expect(apply(before, mergePatchOf(before, after))).toEqual(after);
  });
});
