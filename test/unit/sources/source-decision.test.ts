/**
 * What a poll does for one source: wait while its transaction runs, write its outcome once it
 * ends, render a commit the status does not speak of (and forget an attempt that never began),
 * and what the render leads to: no transaction when the cluster holds it, nothing when it is the
 * same render as the last attempt, one transaction otherwise.
 */
import { describe, expect, it } from 'vitest';
import type { SourceOutcome, SourceStatus } from '../../../src/api/v1alpha1/index.ts';
import type { RenderPlan } from '../../../src/sources/changes-for-render.ts';
import { type Attempt, decideRender, decideSource } from '../../../src/sources/source-decision.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const DIGEST = 'd'.repeat(64);

const attempted = (outcome: SourceOutcome, revision = A): SourceStatus => ({
  lastAttempted: {
    revision,
    shortRevision: revision.slice(0, 7),
    transaction: `shop-${revision.slice(0, 7)}`,
    outcome,
    renderDigest: DIGEST,
  },
});
const found = (phase: string | undefined): Attempt => ({
  state: 'found',
  phase: phase as never,
  message: undefined,
  completedAt: undefined,
});
const none: Attempt = { state: 'none' };

describe('decideSource', () => {
  it('renders a source that never attempted anything', () => {
    expect(decideSource({ status: undefined, at: A, attempt: none })).toEqual({ do: 'render', void: false });
  });

  it('waits while the transaction its status names runs, whatever the branch did', () => {
    for (const phase of [undefined, 'Pending', 'Preparing', 'Committing', 'Verifying', 'RollingBack'])
      expect(decideSource({ status: attempted('InProgress'), at: B, attempt: found(phase) })).toEqual({
        do: 'wait',
      });
  });

  it('writes the outcome once it ends, then decides again', () => {
    for (const outcome of ['Committed', 'RolledBack', 'Failed'] as const)
      expect(decideSource({ status: attempted('InProgress'), at: A, attempt: found(outcome) })).toEqual({
        do: 'settle',
        outcome,
      });
  });

  it('forgets an attempt whose transaction was never created (a crash after the status named it), and renders', () => {
    expect(decideSource({ status: attempted('InProgress'), at: A, attempt: { state: 'absent' } })).toEqual({
      do: 'render',
      void: true,
    });
  });

  it('does nothing for a commit the status already speaks of, whatever came of it', () => {
    for (const outcome of ['Committed', 'RolledBack', 'Failed', 'RenderFailed', 'Refused'] as const)
      expect(decideSource({ status: attempted(outcome), at: A, attempt: none })).toEqual({ do: 'nothing' });
  });

  it('renders a later commit, unless this process rendered it already to the same render', () => {
    expect(decideSource({ status: attempted('RolledBack'), at: B, attempt: none })).toEqual({
      do: 'render',
      void: false,
    });
    expect(decideSource({ status: attempted('RolledBack'), at: B, attempt: none, renderedAt: B })).toEqual({
      do: 'nothing',
    });
  });
});

const changes: RenderPlan = { kind: 'changes', changes: [], applied: [], pruned: [], left: [], next: [] };
const unchanged: RenderPlan = { kind: 'unchanged', left: [], next: [] };

describe('decideRender', () => {
  it('makes a transaction of a render that differs from the last attempt and from the cluster', () => {
    expect(decideRender(undefined, DIGEST, changes, false)).toEqual({ do: 'transaction' });
    expect(decideRender(attempted('Committed'), 'e'.repeat(64), changes, false)).toEqual({
      do: 'transaction',
    });
  });

  it('does not try the same render again after it failed', () => {
    for (const outcome of ['RolledBack', 'Failed', 'Committed'] as const)
      expect(decideRender(attempted(outcome), DIGEST, changes, false)).toEqual({ do: 'same' });
  });

  it('tries it when the attempt that carried its digest never began', () => {
    expect(decideRender(attempted('InProgress'), DIGEST, changes, true)).toEqual({ do: 'transaction' });
  });

  it('needs no transaction for a render the cluster already holds, whatever the last attempt', () => {
    expect(decideRender(attempted('RolledBack'), 'e'.repeat(64), unchanged, false)).toEqual({
      do: 'unchanged',
    });
    expect(decideRender(attempted('Committed'), DIGEST, unchanged, false)).toEqual({ do: 'unchanged' });
  });

  it("refuses what changes-for-render's bounds refuse", () => {
    const refused: RenderPlan = { kind: 'refused', reason: 'TooManyChanges', message: 'too many' };
    expect(decideRender(undefined, DIGEST, refused, false)).toEqual({ do: 'refuse', message: 'too many' });
  });
});
