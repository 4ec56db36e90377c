import { describe, expect, it } from 'vitest';
import { fitToSchema } from '../../../src/api/fit.ts';
import { type TransactionStatus, transactionStatusSchema } from '../../../src/api/v1alpha1/index.ts';
import {
  fitDetail,
  fitStatus,
  refusedDetail,
  refusedStatus,
  STATUS_WRITE_REFUSED,
} from '../../../src/saga/fit-status.ts';
import { withPhase } from '../../../src/saga/status.ts';

const NOW = new Date('2026-01-01T00:00:00Z');

describe('a status write the API server refuses anyway', () => {
  const refused: TransactionStatus = {
    phase: 'Verifying',
    deadline: '2026-01-01T00:10:00Z',
    rollbackRef: 'web-rollback',
    progress: '1/1',
    health: { check: 'Commit', startedAt: '2026-01-01T00:00:00Z', message: 'whatever was refused' },
    items: [
      {
        target: 'v1 ConfigMap shop/web',
        prepared: true,
        committed: true,
        snapshotDigest: 'sha256:abc',
        error: 'a message nobody thought of',
        health: { status: 'Failed', reason: 'Odd', message: 'odd words', since: '2026-01-01T00:00:00Z' },
      },
    ],
    conditions: [
      { type: 'Healthy', status: 'False', reason: 'Refused', message: 'x', lastTransitionTime: 'now' },
    ],
  };
  const accepted = {
    conditions: [
      {
        type: 'Ready',
        status: 'False' as const,
        reason: 'Committing',
        message: 'ok',
        lastTransitionTime: 't',
      },
    ],
  };

  it('keeps what crash safety needs and drops every message copied from elsewhere', () => {
    const minimal = refusedStatus(refused, accepted);
    expect(minimal).toEqual({
      phase: 'Verifying',
      deadline: '2026-01-01T00:10:00Z',
      rollbackRef: 'web-rollback',
      progress: '1/1',
      health: { check: 'Commit', startedAt: '2026-01-01T00:00:00Z' },
      items: [
        {
          target: 'v1 ConfigMap shop/web',
          prepared: true,
          committed: true,
          snapshotDigest: 'sha256:abc',
          health: { status: 'Failed', since: '2026-01-01T00:00:00Z' },
        },
      ],
      conditions: accepted.conditions,
    });
  });

  it('says StatusWriteRefused, naming the fields, in a message that fits whatever the server said', () => {
    const detail = refusedDetail('RollingBack', {
      fields: ['status.conditions[0].message'],
      message: 'z'.repeat(100_000),
    });
    expect(detail.reason).toBe(STATUS_WRITE_REFUSED);
    expect(detail.message).toMatch(
      /^the API server refused the status for RollingBack \(status\.conditions\[0\]\.message\)/,
    );
    expect(detail.message.length).toBeLessThanOrEqual(1024);
    const status = withPhase(refusedStatus(refused, accepted), 'RollingBack', detail, NOW, 1);
    expect(fitStatus(status)).toEqual(status);
    expect(status.conditions?.find((c) => c.type === 'Ready')?.reason).toBe(STATUS_WRITE_REFUSED);
  });
});

describe('fitDetail', () => {
  it('is what the conditions will hold, so a wait compares like with like', () => {
    const detail = fitDetail({ reason: 'Waiting for DB', message: 'm'.repeat(40_000) });
    expect(detail.reason).toBe('WaitingForDB');
    expect(detail.message).toHaveLength(32768);
    expect(fitDetail(detail)).toEqual(detail);
    expect(fitToSchema(transactionStatusSchema.openApi, { conditions: [] })).toEqual({ conditions: [] });
  });
});
