import { describe, expect, it } from 'vitest';
import { type Condition, PHASES, type Phase } from '../../../src/api/v1alpha1/index.ts';
import {
  conditionsFor,
  IllegalTransitionError,
  mergeConditions,
  progressOf,
  TRANSITIONS,
  transitionPath,
  withPhase,
} from '../../../src/saga/status.ts';
import { IN_FLIGHT, item, TERMINAL } from './transaction-fixture.ts';

const detail = { reason: 'LockWait', message: 'waiting for the lock held by shop/deploy-v1' };
const statusOf = (conditions: ReturnType<typeof conditionsFor>, type: string) =>
  conditions.find((c) => c.type === type)?.status;

/** The edges SPEC §3 names, each legal in one step. */
const SPEC_EDGES: ReadonlyArray<[Phase, Phase]> = [
  ['Pending', 'Preparing'],
  ['Preparing', 'Prepared'],
  ['Prepared', 'Committing'],
  ['Committing', 'Committed'],
  ['Committing', 'RollingBack'],
  ['RollingBack', 'RolledBack'],
  ['RollingBack', 'Failed'],
  ['Preparing', 'Failed'],
  ['Failed', 'RollingBack'],
  ['Committed', 'RollingBack'],
];

describe('transitionPath', () => {
  it.each(SPEC_EDGES)('%s → %s is one legal step', (from, to) => {
    expect(transitionPath(from, to)).toEqual([to]);
  });

  it('a phase to itself is no transition', () => {
    for (const phase of PHASES) expect(transitionPath(phase, phase)).toEqual([]);
  });

  it('Preparing → Committing in one write is two logical transitions, through Prepared', () => {
    expect(transitionPath('Preparing', 'Committing')).toEqual(['Prepared', 'Committing']);
  });

  it('a Committed transaction can only leave by rolling back', () => {
    expect(TRANSITIONS.Committed).toEqual(['RollingBack']);
    expect(transitionPath('Committed', 'RolledBack')).toEqual(['RollingBack', 'RolledBack']);
  });

  it('RolledBack is final', () => {
    for (const to of PHASES.filter((p) => p !== 'RolledBack')) {
      expect(() => transitionPath('RolledBack', to)).toThrow(IllegalTransitionError);
    }
  });

  it.each<[Phase, Phase]>([
    ['Committed', 'Committing'],
    ['Committed', 'Pending'],
    ['Failed', 'Committed'],
    ['Failed', 'Preparing'],
    ['RollingBack', 'Committing'],
    ['RollingBack', 'Committed'],
    ['Committing', 'Preparing'],
    ['Prepared', 'Preparing'],
    ['Pending', 'Committed'],
    ['Preparing', 'Pending'],
  ])('%s → %s is illegal and names both phases', (from, to) => {
    expect(() => transitionPath(from, to)).toThrow(IllegalTransitionError);
    expect(() => transitionPath(from, to)).toThrow(`from ${from} to ${to}`);
  });

  it('nothing ever returns to Pending', () => {
    for (const from of PHASES.filter((p) => p !== 'Pending')) {
      expect(() => transitionPath(from, 'Pending')).toThrow(IllegalTransitionError);
    }
  });

  it('every path is made of legal single steps', () => {
    for (const from of PHASES) {
      for (const to of PHASES) {
        let path: Phase[];
        try {
          path = transitionPath(from, to);
        } catch {
          continue;
        }
        let at = from;
        for (const next of path) {
          expect(TRANSITIONS[at]).toContain(next);
          at = next;
        }
        expect(at).toBe(to);
      }
    }
  });
});

describe('conditionsFor (kstatus)', () => {
  it('Ready is True only at Committed', () => {
    for (const phase of PHASES) {
      expect(statusOf(conditionsFor(phase, detail), 'Ready'), phase).toBe(
        phase === 'Committed' ? 'True' : 'False',
      );
    }
  });

  it('Reconciling is True exactly for in-flight phases, with the detail as reason', () => {
    for (const phase of IN_FLIGHT) {
      expect(conditionsFor(phase, detail).find((c) => c.type === 'Reconciling')).toEqual({
        type: 'Reconciling',
        status: 'True',
        ...detail,
      });
    }
    for (const phase of TERMINAL) expect(statusOf(conditionsFor(phase, detail), 'Reconciling')).toBe('False');
  });

  it('Stalled is True exactly at Failed and RolledBack (kstatus: not Current), carrying the detail', () => {
    const failure = { reason: 'RollbackConflict', message: 'ConfigMap shop/app-config changed after commit' };
    for (const phase of PHASES) {
      expect(statusOf(conditionsFor(phase, failure), 'Stalled'), phase).toBe(
        phase === 'Failed' || phase === 'RolledBack' ? 'True' : 'False',
      );
    }
    expect(conditionsFor('Failed', failure).find((c) => c.type === 'Stalled')).toMatchObject(failure);
  });

  it.each<[Phase, Record<string, string | undefined>]>([
    ['Pending', { Prepared: 'False', Committed: undefined, RolledBack: undefined }],
    ['Preparing', { Prepared: 'False', Committed: undefined, RolledBack: undefined }],
    ['Prepared', { Prepared: 'True', Committed: 'False', RolledBack: undefined }],
    ['Committing', { Prepared: 'True', Committed: 'False', RolledBack: undefined }],
    ['Committed', { Prepared: undefined, Committed: 'True', RolledBack: undefined }],
    ['RollingBack', { Prepared: undefined, Committed: 'False', RolledBack: 'False' }],
    ['RolledBack', { Prepared: undefined, Committed: 'False', RolledBack: 'True' }],
    ['Failed', { Prepared: undefined, Committed: undefined, RolledBack: undefined }],
  ])('%s sets Prepared/Committed/RolledBack to %o (undefined: left as it was)', (phase, expected) => {
    const conditions = conditionsFor(phase, detail);
    for (const [type, status] of Object.entries(expected))
      expect(statusOf(conditions, type), type).toBe(status);
  });

  it('every phase sets each condition type at most once, with a CRD-valid CamelCase reason', () => {
    const reasonPattern = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
    for (const phase of PHASES) {
      const conditions = conditionsFor(phase, detail);
      const types = conditions.map((c) => c.type);
      expect(new Set(types).size, phase).toBe(types.length);
      for (const c of conditions) expect(c.reason).toMatch(reasonPattern);
      expect(types.slice(0, 3)).toEqual(['Ready', 'Reconciling', 'Stalled']);
    }
  });
});

describe('mergeConditions', () => {
  const T0 = '2026-03-01T12:00:00.000Z';
  const T1 = '2026-03-01T12:05:00.000Z';
  const existing: Condition[] = [
    { type: 'Ready', status: 'False', reason: 'LockWait', message: 'waiting', lastTransitionTime: T0 },
    { type: 'Reconciling', status: 'True', reason: 'LockWait', message: 'waiting', lastTransitionTime: T0 },
    { type: 'Prepared', status: 'True', reason: 'TargetsLocked', message: 'ok', lastTransitionTime: T0 },
  ];

  it('keeps lastTransitionTime when the status is unchanged, even if reason and message change', () => {
    const [reconciling] = mergeConditions(
      existing,
      [{ type: 'Reconciling', status: 'True', reason: 'Committing', message: 'applying change 2 of 3' }],
      T1,
      2,
    ).filter((c) => c.type === 'Reconciling');
    expect(reconciling).toEqual({
      type: 'Reconciling',
      status: 'True',
      reason: 'Committing',
      message: 'applying change 2 of 3',
      lastTransitionTime: T0,
      observedGeneration: 2,
    });
  });

  it('moves lastTransitionTime to now when the status changes', () => {
    const merged = mergeConditions(
      existing,
      [{ type: 'Ready', status: 'True', reason: 'Committed', message: 'all changes applied' }],
      T1,
      undefined,
    );
    expect(merged.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(T1);
  });

  it('adds new condition types with lastTransitionTime now, and keeps the ones not updated', () => {
    const merged = mergeConditions(
      existing,
      [{ type: 'Committed', status: 'False', reason: 'Committing', message: '1/3' }],
      T1,
      undefined,
    );
    expect(merged.map((c) => c.type)).toEqual(['Ready', 'Reconciling', 'Prepared', 'Committed']);
    expect(merged.find((c) => c.type === 'Committed')?.lastTransitionTime).toBe(T1);
    expect(merged.find((c) => c.type === 'Prepared')).toEqual(existing[2]);
  });

  it('starts from nothing', () => {
    expect(
      mergeConditions(undefined, [{ type: 'Ready', status: 'False', reason: 'Pending', message: '' }], T1, 1),
    ).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'Pending',
        message: '',
        lastTransitionTime: T1,
        observedGeneration: 1,
      },
    ]);
  });

  it('does not modify the existing conditions', () => {
    const before = structuredClone(existing);
    mergeConditions(existing, [{ type: 'Ready', status: 'True', reason: 'Committed', message: '' }], T1, 3);
    expect(existing).toEqual(before);
  });
});

describe('withPhase', () => {
  const now = new Date('2026-03-01T12:10:00.000Z');

  it.each(TERMINAL)('%s records completedAt', (phase) => {
    const status = withPhase(
      { phase: 'RollingBack', startedAt: '2026-03-01T12:00:00.000Z' },
      phase,
      detail,
      now,
      4,
    );
    expect(status.completedAt).toBe(now.toISOString());
    expect(status.startedAt).toBe('2026-03-01T12:00:00.000Z');
  });

  it.each(IN_FLIGHT)('%s records no completedAt', (phase) => {
    const status = withPhase({ phase: 'Pending' }, phase, detail, now, 4);
    expect(status).not.toHaveProperty('completedAt');
  });

  it('sets the phase, observedGeneration and the conditions of the new phase', () => {
    const status = withPhase({ phase: 'Committing', items: [item.committed()] }, 'Committed', detail, now, 4);
    expect(status.phase).toBe('Committed');
    expect(status.observedGeneration).toBe(4);
    expect(status.items).toEqual([item.committed()]);
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      lastTransitionTime: now.toISOString(),
      observedGeneration: 4,
    });
  });

  it('a new detail in the same phase keeps the transition times of unchanged conditions', () => {
    const first = withPhase({}, 'Preparing', detail, new Date('2026-03-01T12:00:00.000Z'), 1);
    const second = withPhase(first, 'Preparing', { reason: 'DryRun', message: 'dry-running' }, now, 1);
    const reconciling = second.conditions?.find((c) => c.type === 'Reconciling');
    expect(reconciling).toMatchObject({ reason: 'DryRun', lastTransitionTime: '2026-03-01T12:00:00.000Z' });
  });

  it('without a generation, writes no observedGeneration', () => {
    const status = withPhase({}, 'Pending', detail, now, undefined);
    expect(status).not.toHaveProperty('observedGeneration');
    expect(status.conditions?.every((c) => !('observedGeneration' in c))).toBe(true);
  });
});

describe('progressOf', () => {
  it('counts changes committed and not rolled back, over the total', () => {
    const items = [item.committed(), item.rolledBack(), item.conflict(), item.prepared()];
    expect(progressOf({ items }, 4)).toBe('2/4');
  });

  it('is 0/N before anything is committed', () => {
    expect(progressOf({}, 3)).toBe('0/3');
  });
});
