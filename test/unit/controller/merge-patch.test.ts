import { describe, expect, it } from 'vitest';
import { mergePatchOf } from '../../../src/controller/context.ts';

/** RFC 7386 applied to a plain object: what the API server does with a merge patch. */
function apply(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = apply(out[k], v);
  }
  return out;
}

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
