import { describe, expect, it } from 'vitest';
import {
  canFitPattern,
  fitToSchema,
  maxLengthAt,
  REASON_PATTERN,
  TRUNCATION_MARKER,
  toReason,
  truncateText,
} from '../../../src/api/fit.ts';
import type { OpenApiSchema } from '../../../src/api/schema.ts';
import {
  type TransactionStatus,
  transactionCrd,
  transactionStatusSchema,
} from '../../../src/api/v1alpha1/index.ts';

const STATUS = transactionStatusSchema.openApi;
const reasonMatches = (s: string) => new RegExp(REASON_PATTERN).test(s);

describe('truncateText', () => {
  it('keeps what fits and cuts what does not to exactly the limit, ending with the marker', () => {
    expect(truncateText('short', 10)).toBe('short');
    const cut = truncateText('x'.repeat(40 * 1024), 32768);
    expect(cut).toHaveLength(32768);
    expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    const cut = truncateText(`${'a'.repeat(40)}${'😀'.repeat(40)}`, 54);
    expect(cut.length).toBeLessThanOrEqual(54);
    expect(cut.isWellFormed()).toBe(true);
  });
});

describe('toReason', () => {
  it('makes CamelCase reasons of words, as metav1.Condition wants them', () => {
    expect(toReason('Waiting for DB')).toBe('WaitingForDB');
    expect(toReason('back-off: 5s')).toBe('BackOff5s');
    expect(toReason('42 is not a reason')).toBe('IsNotAReason');
    expect(toReason('ProgressDeadlineExceeded')).toBe('ProgressDeadlineExceeded');
    expect(toReason('Reason,With:Colons')).toBe('Reason,With:Colons'); // valid as it is
  });

  it('gives Unknown when nothing usable is left, and every result matches the pattern', () => {
    for (const text of ['', '   ', '123', '…', 'é', 'trailing:', 'x'.repeat(5000), '\u001b[31mred']) {
      const reason = toReason(text, 1024);
      expect(reasonMatches(reason), `${JSON.stringify(text)} → ${reason}`).toBe(true);
      expect(reason.length).toBeLessThanOrEqual(1024);
    }
    expect(toReason('…')).toBe('Unknown');
  });
});

describe('fitting the Transaction status to its schema', () => {
  const status = (over: Partial<TransactionStatus>): TransactionStatus => ({ phase: 'Verifying', ...over });
  const condition = (reason: string, message: string) => ({
    type: 'Healthy',
    status: 'False' as const,
    reason,
    message,
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });

  it('reads its limits from the schema the CRD is generated from', () => {
    const crdStatus = transactionCrd().spec.versions[0]?.schema.openAPIV3Schema.properties?.status as
      | OpenApiSchema
      | undefined;
    expect(crdStatus).toEqual(STATUS);
    expect(maxLengthAt(STATUS, 'conditions', '*', 'message')).toBe(32768);
    expect(maxLengthAt(STATUS, 'health', 'message')).toBe(4096);
    expect(maxLengthAt(STATUS, 'items', '*', 'health', 'message')).toBe(1024);
    expect(maxLengthAt(STATUS, 'items', '*', 'error')).toBe(1024);
  });

  it('can make every pattern of the status schema match (a new one needs a rewrite in fit.ts)', () => {
    const patterns: string[] = [];
    const walk = (s: OpenApiSchema) => {
      if (s.pattern) patterns.push(s.pattern);
      for (const p of Object.values(s.properties ?? {})) walk(p);
      if (s.items) walk(s.items);
    };
    walk(STATUS);
    expect(patterns.length).toBeGreaterThan(0);
    for (const p of patterns) expect(canFitPattern(p), p).toBe(true);
  });

  it('fits every string a tenant or a target can put there, at any depth', () => {
    const huge = 'y'.repeat(50_000);
    const fitted = fitToSchema(
      STATUS,
      status({
        conditions: [condition('Waiting for DB', huge)],
        health: { check: 'Commit', message: huge },
        items: [
          {
            target: 'apps/v1 Deployment shop/web',
            error: huge,
            health: { status: 'Failed', reason: 'Image pull: back off', message: huge },
          },
        ],
      }),
    );
    expect(fitted.conditions?.[0]?.reason).toBe('WaitingForDB');
    expect(fitted.conditions?.[0]?.message).toHaveLength(32768);
    expect(fitted.health?.message).toHaveLength(4096);
    expect(fitted.items?.[0]?.error).toHaveLength(1024);
    expect(fitted.items?.[0]?.health).toMatchObject({ reason: 'ImagePullBackOff', status: 'Failed' });
    expect(fitted.items?.[0]?.health?.message?.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(fitted.items?.[0]?.target).toBe('apps/v1 Deployment shop/web');
  });

  it('leaves a status that fits exactly as it was', () => {
    const fine = status({
      progress: '1/2',
      conditions: [condition('AwaitingHealth', 'waiting for Deployment shop/web')],
      items: [{ committed: true, health: { status: 'InProgress', reason: 'ReplicasNotReady' } }],
    });
    expect(fitToSchema(STATUS, fine)).toEqual(fine);
  });
});
