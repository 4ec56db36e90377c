import { describe, expect, it } from 'vitest';
import { phaseOf } from '../../../src/api/requests.ts';
import {
  ANNOTATION_REQUEST_ROLLBACK,
  ANNOTATION_RETRY_ROLLBACK,
  type Phase,
} from '../../../src/api/v1alpha1/index.ts';
import {
  decide,
  MAX_RECOVERY_ATTEMPTS,
  RECOVERY_BASE_DELAY_MS,
  recoveryDelayMs,
  unrolledCommits,
  wakeUpAt,
} from '../../../src/saga/decide.ts';
import { ALL_PHASES, IN_FLIGHT, item, TERMINAL, txnIn } from './transaction-fixture.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const request = { [ANNOTATION_REQUEST_ROLLBACK]: 'true' };
const retry = { [ANNOTATION_RETRY_ROLLBACK]: 'true' };

/** A Failed transaction whose rollback left committed changes standing. */
const failedWithUnrolled = (status: Parameters<typeof txnIn>[0] = {}) =>
  txnIn({ phase: 'Failed', items: [item.rolledBack(), item.failedToRollBack()], ...status });

describe('decide: tx.janus.io/cancel', () => {
  const cancel = { 'tx.janus.io/cancel': 'wrong image' };

  it.each(['Pending', 'Preparing', 'Prepared', 'Committing', 'Verifying'] as const)(
    'in %s starts a rollback of whatever was committed, consuming the annotation',
    (phase) => {
      expect(decide(txnIn({ phase, annotations: cancel }), NOW)).toEqual({
        do: 'beginRollback',
        cause: 'Cancelled',
        consumeAnnotation: 'tx.janus.io/cancel',
      });
    },
  );

  it('while already rolling back is dropped: the rollback goes on', () => {
    expect(decide(txnIn({ phase: 'RollingBack', annotations: cancel }), NOW)).toMatchObject({
      do: 'dropAnnotation',
      annotation: 'tx.janus.io/cancel',
    });
  });

  it.each(TERMINAL)('on a %s transaction is dropped, saying why', (phase) => {
    const step = decide(txnIn({ phase, annotations: cancel }), NOW);
    expect(step).toMatchObject({ do: 'dropAnnotation', annotation: 'tx.janus.io/cancel' });
    if (phase === 'Committed') expect(step).toMatchObject({ why: expect.stringContaining('janus rollback') });
  });

  it('waits for the finalizer first, and never outranks a deletion', () => {
    expect(decide(txnIn({ phase: 'Preparing', finalizer: false, annotations: cancel }), NOW)).toEqual({
      do: 'addFinalizer',
    });
    expect(
      decide(txnIn({ phase: 'Preparing', deletionTimestamp: iso(NOW), annotations: cancel }), NOW),
    ).toEqual({ do: 'finalize' });
  });
});

describe('decide: a Transaction being deleted', () => {
  it.each(ALL_PHASES)(
    'in %s with the finalizer is finalized (locks released), never rolled back',
    (phase) => {
      const txn = txnIn({
        phase,
        deletionTimestamp: iso(NOW),
        items: [item.committed()],
        annotations: { ...request, ...retry },
      });
      expect(decide(txn, NOW)).toEqual({ do: 'finalize' });
    },
  );

  it.each(ALL_PHASES)(
    'in %s without the finalizer needs nothing: the deletion finishes on its own',
    (phase) => {
      const txn = txnIn({ phase, finalizer: false, deletionTimestamp: iso(NOW), items: [item.committed()] });
      expect(decide(txn, NOW)).toEqual({ do: 'nothing' });
    },
  );
});

describe('decide: in-flight phases', () => {
  it.each(IN_FLIGHT)('%s without the finalizer adds it before doing anything else', (phase) => {
    expect(decide(txnIn({ phase, finalizer: false }), NOW)).toEqual({ do: 'addFinalizer' });
  });

  it('a new Transaction without any status adds the finalizer, then starts', () => {
    expect(decide(txnIn({ finalizer: false }), NOW)).toEqual({ do: 'addFinalizer' });
    expect(decide(txnIn(), NOW)).toEqual({ do: 'start' });
  });

  it.each([
    ['Pending', 'start'],
    ['Preparing', 'prepare'],
    ['Prepared', 'commit'],
    ['Committing', 'commit'],
    ['Verifying', 'verify'],
    ['RollingBack', 'rollback'],
  ] as const)('%s with the finalizer goes on with %s', (phase, step) => {
    expect(decide(txnIn({ phase }), NOW)).toEqual({ do: step });
  });

  it('RollingBack with every change undone and a rollback health check under way verifies it', () => {
    const started = { check: 'Rollback', startedAt: iso(NOW), deadline: iso(NOW + 60_000) } as const;
    expect(
      decide(txnIn({ phase: 'RollingBack', items: [item.rolledBack()], status: { health: started } }), NOW),
    ).toEqual({ do: 'verify' });
  });

  it('RollingBack after a failed commit check (or a finished rollback check) rolls back, not verifies', () => {
    const commitCheck = {
      check: 'Commit',
      startedAt: iso(NOW - 60_000),
      completedAt: iso(NOW),
      result: 'Unhealthy',
    } as const;
    expect(
      decide(
        txnIn({ phase: 'RollingBack', items: [item.committed()], status: { health: commitCheck } }),
        NOW,
      ),
    ).toEqual({ do: 'rollback' });
    const retried = { ...commitCheck, check: 'Rollback' } as const;
    expect(
      decide(txnIn({ phase: 'RollingBack', items: [item.rolledBack()], status: { health: retried } }), NOW),
    ).toEqual({ do: 'rollback' });
  });

  it.each(IN_FLIGHT.filter((p) => p !== 'RollingBack'))(
    '%s leaves one-shot annotations in place until the transaction is terminal',
    (phase) => {
      const step = decide(txnIn({ phase, annotations: { ...request, ...retry } }), NOW);
      expect(step.do).not.toBe('beginRollback');
      expect(step.do).not.toBe('dropAnnotation');
    },
  );

  it('RollingBack drops request-rollback (the rollback is under way) and keeps retry-rollback for its end', () => {
    expect(decide(txnIn({ phase: 'RollingBack', annotations: request }), NOW)).toMatchObject({
      do: 'dropAnnotation',
      annotation: ANNOTATION_REQUEST_ROLLBACK,
      why: 'shop/deploy-v2 is already rolling back',
    });
    expect(decide(txnIn({ phase: 'RollingBack', annotations: retry }), NOW)).toEqual({ do: 'rollback' });
  });

  it('ignores the recovery schedule while in flight: a RollingBack transaction just rolls back', () => {
    const txn = txnIn({
      phase: 'RollingBack',
      items: [item.failedToRollBack()],
      status: { recoveryAttempts: 2, nextRecoveryAt: iso(NOW + 60_000) },
    });
    expect(decide(txn, NOW)).toEqual({ do: 'rollback' });
  });
});

describe('decide: terminal phases without annotations', () => {
  it.each(TERMINAL)('%s with the finalizer cleans up (release locks, remove the finalizer)', (phase) => {
    expect(decide(txnIn({ phase, items: [item.rolledBack()] }), NOW)).toEqual({ do: 'cleanup' });
  });

  it.each(TERMINAL)('%s without the finalizer needs nothing', (phase) => {
    expect(decide(txnIn({ phase, finalizer: false, items: [item.rolledBack()] }), NOW)).toEqual({
      do: 'nothing',
    });
  });

  it('Committed never rolls back by itself, although every change is committed and not rolled back', () => {
    const txn = txnIn({ phase: 'Committed', items: [item.committed(), item.committed()] });
    expect(decide(txn, NOW)).toEqual({ do: 'cleanup' });
  });
});

describe('decide: tx.janus.io/request-rollback', () => {
  it.each([true, false])(
    'on Committed (finalizer: %s) begins a rollback and consumes the annotation',
    (finalizer) => {
      const txn = txnIn({ phase: 'Committed', finalizer, annotations: request, items: [item.committed()] });
      expect(decide(txn, NOW)).toEqual({
        do: 'beginRollback',
        cause: 'RollbackRequested',
        consumeAnnotation: ANNOTATION_REQUEST_ROLLBACK,
      });
    },
  );

  it('on Failed is dropped with a reason naming the phase, and the retry to ask instead', () => {
    const step = decide(
      txnIn({ phase: 'Failed', annotations: request, items: [item.failedToRollBack()] }),
      NOW,
    );
    expect(step).toMatchObject({ do: 'dropAnnotation', annotation: ANNOTATION_REQUEST_ROLLBACK });
    expect(step.do === 'dropAnnotation' && step.why).toContain('is Failed');
    expect(step.do === 'dropAnnotation' && step.why).toContain('Committed');
    expect(step.do === 'dropAnnotation' && step.why).toContain('retry-rollback');
  });

  it('on RolledBack is dropped: it is already rolled back', () => {
    const step = decide(
      txnIn({ phase: 'RolledBack', annotations: request, items: [item.rolledBack()] }),
      NOW,
    );
    expect(step).toEqual({
      do: 'dropAnnotation',
      annotation: ANNOTATION_REQUEST_ROLLBACK,
      why: 'shop/deploy-v2 is already rolled back',
    });
  });

  it('wins over retry-rollback when both are set; retry-rollback is handled on a later pass', () => {
    const txn = txnIn({
      phase: 'Committed',
      annotations: { ...request, ...retry },
      items: [item.committed()],
    });
    expect(decide(txn, NOW)).toMatchObject({ do: 'beginRollback', cause: 'RollbackRequested' });
  });
});

describe('decide: tx.janus.io/retry-rollback', () => {
  it('on Failed with committed changes left standing begins a rollback and consumes the annotation', () => {
    expect(decide(failedWithUnrolled({ annotations: retry }), NOW)).toEqual({
      do: 'beginRollback',
      cause: 'RollbackRetried',
      consumeAnnotation: ANNOTATION_RETRY_ROLLBACK,
    });
  });

  it('on Failed retries conflicts too: a human asked for it', () => {
    const txn = txnIn({ phase: 'Failed', annotations: retry, items: [item.rolledBack(), item.conflict()] });
    expect(decide(txn, NOW)).toMatchObject({ do: 'beginRollback', cause: 'RollbackRetried' });
  });

  it('on Failed ignores the recovery budget and schedule: a human asked for it', () => {
    const txn = failedWithUnrolled({
      annotations: retry,
      status: { recoveryAttempts: MAX_RECOVERY_ATTEMPTS, nextRecoveryAt: iso(NOW + 3_600_000) },
    });
    expect(decide(txn, NOW)).toMatchObject({ do: 'beginRollback', cause: 'RollbackRetried' });
  });

  it('on Failed whose committed changes were all restored by hand (janus recover) finishes the rollback', () => {
    const txn = txnIn({ phase: 'Failed', annotations: retry, items: [item.rolledBack(), item.prepared()] });
    expect(decide(txn, NOW)).toMatchObject({ do: 'beginRollback', cause: 'RollbackRetried' });
  });

  it.each([
    ['nothing was committed', [item.prepared(), item.prepared()]],
    ['there are no items', []],
  ])('on Failed when %s is dropped: nothing is left to roll back', (_, items) => {
    const step = decide(txnIn({ phase: 'Failed', annotations: retry, items }), NOW);
    expect(step).toMatchObject({ do: 'dropAnnotation', annotation: ANNOTATION_RETRY_ROLLBACK });
    expect(step.do === 'dropAnnotation' && step.why).toMatch(/nothing is left to roll back/);
  });

  it('on Committed is dropped with a reason naming the phase and janus rollback', () => {
    const step = decide(txnIn({ phase: 'Committed', annotations: retry, items: [item.committed()] }), NOW);
    expect(step).toMatchObject({ do: 'dropAnnotation', annotation: ANNOTATION_RETRY_ROLLBACK });
    expect(step.do === 'dropAnnotation' && step.why).toContain('is Committed');
    expect(step.do === 'dropAnnotation' && step.why).toContain('applies to Failed transactions');
    expect(step.do === 'dropAnnotation' && step.why).toContain('janus rollback');
  });

  it('on RolledBack is dropped: it is already rolled back', () => {
    const step = decide(txnIn({ phase: 'RolledBack', annotations: retry, items: [item.rolledBack()] }), NOW);
    expect(step).toMatchObject({ do: 'dropAnnotation', why: 'shop/deploy-v2 is already rolled back' });
  });
});

describe('decide: bounded automatic recovery from Failed', () => {
  it('retries at once when no retry time is recorded, without consuming any annotation', () => {
    expect(decide(failedWithUnrolled(), NOW)).toEqual({ do: 'beginRollback', cause: 'Recovery' });
  });

  it.each([
    ['in the past', -1],
    ['exactly now', 0],
  ])('retries when nextRecoveryAt is %s', (_, offset) => {
    const txn = failedWithUnrolled({ status: { recoveryAttempts: 1, nextRecoveryAt: iso(NOW + offset) } });
    expect(decide(txn, NOW)).toEqual({ do: 'beginRollback', cause: 'Recovery' });
  });

  it('before nextRecoveryAt, first cleans up (locks released, finalizer removed) …', () => {
    const txn = failedWithUnrolled({ status: { recoveryAttempts: 1, nextRecoveryAt: iso(NOW + 20_000) } });
    expect(decide(txn, NOW)).toEqual({ do: 'cleanup' });
  });

  it('… then waits until nextRecoveryAt', () => {
    const txn = failedWithUnrolled({
      finalizer: false,
      status: { recoveryAttempts: 1, nextRecoveryAt: iso(NOW + 20_000) },
    });
    expect(decide(txn, NOW)).toEqual({ do: 'wait', untilMs: NOW + 20_000 });
  });

  it('retries up to the last allowed attempt …', () => {
    const txn = failedWithUnrolled({ status: { recoveryAttempts: MAX_RECOVERY_ATTEMPTS - 1 } });
    expect(decide(txn, NOW)).toEqual({ do: 'beginRollback', cause: 'Recovery' });
  });

  it.each([MAX_RECOVERY_ATTEMPTS, MAX_RECOVERY_ATTEMPTS + 3])(
    '… and not after %s attempts: a human must step in',
    (attempts) => {
      const past = iso(NOW - 1);
      expect(
        decide(failedWithUnrolled({ status: { recoveryAttempts: attempts, nextRecoveryAt: past } }), NOW),
      ).toEqual({ do: 'cleanup' });
      expect(
        decide(
          failedWithUnrolled({
            finalizer: false,
            status: { recoveryAttempts: attempts, nextRecoveryAt: past },
          }),
          NOW,
        ),
      ).toEqual({ do: 'nothing' });
    },
  );

  it('never retries conflicts automatically: someone else changed those targets', () => {
    const txn = txnIn({ phase: 'Failed', items: [item.rolledBack(), item.conflict(), item.conflict()] });
    expect(decide(txn, NOW)).toEqual({ do: 'cleanup' });
    expect(decide({ ...txn, metadata: { ...txn.metadata, finalizers: [] } }, NOW)).toEqual({ do: 'nothing' });
  });

  it('retries when a retryable item stands beside a conflict', () => {
    const txn = txnIn({ phase: 'Failed', items: [item.conflict(), item.failedToRollBack()] });
    expect(decide(txn, NOW)).toEqual({ do: 'beginRollback', cause: 'Recovery' });
  });

  it('does not retry a transaction that failed before committing anything', () => {
    expect(decide(txnIn({ phase: 'Failed', items: [item.prepared(), item.prepared()] }), NOW)).toEqual({
      do: 'cleanup',
    });
  });

  it('runs at most MAX_RECOVERY_ATTEMPTS automatic rollbacks, each later than the one before', () => {
    // The controller's side of the loop: each Recovery counts an attempt; each rollback that fails
    // again schedules the next one with recoveryDelayMs while attempts remain.
    let attempts = 0;
    let nextRecoveryAt: string | undefined;
    let now = NOW;
    const startedAt: number[] = [];
    for (let pass = 0; pass < 50; pass++) {
      const txn = failedWithUnrolled({
        finalizer: false,
        status: { recoveryAttempts: attempts, ...(nextRecoveryAt && { nextRecoveryAt }) },
      });
      const step = decide(txn, now);
      if (step.do === 'wait') {
        now = step.untilMs;
        continue;
      }
      if (step.do !== 'beginRollback') break;
      startedAt.push(now);
      attempts += 1;
      nextRecoveryAt = attempts < MAX_RECOVERY_ATTEMPTS ? iso(now + recoveryDelayMs(attempts)) : undefined;
    }
    expect(startedAt).toHaveLength(MAX_RECOVERY_ATTEMPTS);
    const gaps = startedAt.slice(1).map((t, i) => t - (startedAt[i] as number));
    expect(gaps.every((gap) => gap >= RECOVERY_BASE_DELAY_MS)).toBe(true);
    expect(gaps).toEqual([...gaps].sort((a, b) => a - b));
  });
});

describe('wakeUpAt', () => {
  it.each(IN_FLIGHT)('%s wakes at its deadline, even when nothing else happens', (phase) => {
    const deadline = '2026-03-01T12:30:00.000Z';
    expect(wakeUpAt(txnIn({ phase, status: { deadline } }))).toBe(Date.parse(deadline));
  });

  it('an in-flight transaction without a deadline yet has no wake-up time', () => {
    expect(wakeUpAt(txnIn())).toBeUndefined();
    expect(wakeUpAt(txnIn({ phase: 'Pending' }))).toBeUndefined();
  });

  it.each(TERMINAL)('%s ignores the old deadline', (phase) => {
    expect(wakeUpAt(txnIn({ phase, status: { deadline: iso(NOW) } }))).toBeUndefined();
  });

  it('Failed with a retryable rollback wakes at nextRecoveryAt', () => {
    const at = iso(NOW + 40_000);
    expect(wakeUpAt(failedWithUnrolled({ status: { nextRecoveryAt: at, deadline: iso(NOW) } }))).toBe(
      NOW + 40_000,
    );
  });

  it('Failed with only conflicts left never wakes by itself, whatever nextRecoveryAt says', () => {
    const txn = txnIn({ phase: 'Failed', items: [item.conflict()], status: { nextRecoveryAt: iso(NOW) } });
    expect(wakeUpAt(txn)).toBeUndefined();
  });

  it('Failed without a scheduled recovery does not wake', () => {
    expect(wakeUpAt(failedWithUnrolled())).toBeUndefined();
  });
});

describe('recoveryDelayMs', () => {
  it('starts at the base delay and doubles with each attempt', () => {
    expect([0, 1, 2, 3, 4].map(recoveryDelayMs)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
    expect(recoveryDelayMs(0)).toBe(RECOVERY_BASE_DELAY_MS);
  });

  it('treats a negative attempt count as none', () => {
    expect(recoveryDelayMs(-2)).toBe(RECOVERY_BASE_DELAY_MS);
  });
});

describe('unrolledCommits', () => {
  it('counts committed changes not rolled back, conflicts included', () => {
    const txn = txnIn({
      phase: 'Failed',
      items: [item.prepared(), item.committed(), item.rolledBack(), item.conflict(), item.failedToRollBack()],
    });
    expect(unrolledCommits(txn)).toBe(3);
  });

  it('is zero without status or items', () => {
    expect(unrolledCommits(txnIn())).toBe(0);
    expect(unrolledCommits(txnIn({ phase: 'Committing' }))).toBe(0);
  });
});

describe('phaseOf', () => {
  it('is Pending until a phase is recorded', () => {
    expect(phaseOf(txnIn())).toBe('Pending');
    expect(phaseOf(txnIn({ status: { deadline: iso(NOW) } }))).toBe('Pending');
    expect(phaseOf(txnIn({ phase: 'RollingBack' as Phase }))).toBe('RollingBack');
  });
});
