import { describe, expect, it } from 'vitest';
import type { HealthAssessment } from '../../../src/health/index.ts';
import { progressTickMs, stableForMs, windowProgress, windowVerdict } from '../../../src/saga/bake-window.ts';
import { type Assessed, gateVerdict } from '../../../src/saga/health-gate.ts';
import { txnIn } from './transaction-fixture.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const S = 1000;

const healthy: HealthAssessment = {
  status: 'Current',
  reason: 'RolloutComplete',
  message: 'Deployment shop/web: 2 of 2 replicas updated and available',
};
const look = (assessment: HealthAssessment, restarts = 0, restartsAtOpen?: number): Assessed => ({
  index: 1,
  assessment,
  restarts: {
    total: restarts,
    ...(restarts > 0 && { worst: { pod: 'shop/web-1', container: 'app', count: restarts } }),
  },
  ...(restartsAtOpen !== undefined && { restartsAtOpen }),
});
const window = (extra: { since?: string; deadline?: string } = {}) => ({ stableForMs: 30 * S, ...extra });

describe('gateVerdict with a bake window (health.stableFor)', () => {
  it('opens the window at the first look where every target is healthy, instead of passing', () => {
    expect(gateVerdict([look(healthy)], NOW, iso(NOW + 60 * S), window())).toEqual({
      kind: 'baking',
      untilMs: NOW + 30 * S,
      opened: true,
    });
  });

  it('stableFor 0s (the default) passes at the first healthy look, as without a window', () => {
    expect(gateVerdict([look(healthy)], NOW, undefined, { stableForMs: 0 })).toEqual({ kind: 'healthy' });
    expect(gateVerdict([look(healthy)], NOW, undefined)).toEqual({ kind: 'healthy' });
  });

  it('holds while the targets stay healthy inside the window, counting from the persisted start', () => {
    const since = iso(NOW - 12 * S);
    expect(gateVerdict([look(healthy, 2, 2)], NOW, iso(NOW + 60 * S), window({ since }))).toEqual({
      kind: 'baking',
      untilMs: NOW + 18 * S,
      opened: false,
    });
  });

  it('passes once the window has gone by with no regression', () => {
    const since = iso(NOW - 30 * S);
    expect(gateVerdict([look(healthy)], NOW, iso(NOW + 60 * S), window({ since }))).toEqual({
      kind: 'healthy',
      stableFor: '30s',
    });
  });

  it('a pod crash-looping inside the window is a regression naming the pod, even after the window end', () => {
    const crashing: HealthAssessment = {
      status: 'Failed',
      reason: 'CrashLoopBackOff',
      message: 'Deployment shop/web: pod shop/web-1 container app is in CrashLoopBackOff',
    };
    for (const ago of [8, 31]) {
      expect(gateVerdict([look(crashing)], NOW, undefined, window({ since: iso(NOW - ago * S) }))).toEqual({
        kind: 'regressed',
        what: crashing.message,
        into: `${ago}s into the 30s bake window`,
      });
    }
  });

  it('Ready or Available turning False inside the window is a regression (not a wait)', () => {
    const notAvailable: HealthAssessment = {
      status: 'InProgress',
      reason: 'UpdatedReplicasNotAvailable',
      message: 'Deployment shop/web: 1 of 2 updated replicas available',
    };
    const verdict = gateVerdict([look(notAvailable)], NOW, undefined, window({ since: iso(NOW - 5 * S) }));
    expect(verdict).toMatchObject({ kind: 'regressed', what: notAvailable.message });
  });

  it('restarts climbing above their count when the window opened is a regression naming the container', () => {
    const verdict = gateVerdict([look(healthy, 3, 1)], NOW, undefined, window({ since: iso(NOW - 5 * S) }));
    expect(verdict).toEqual({
      kind: 'regressed',
      what: 'Deployment shop/web: restarts climbed from 1 to 3: pod shop/web-1 container app restarted (restartCount 3)',
      into: '5s into the 30s bake window',
    });
  });

  it('restarts from before the window (or fewer, a pod replaced) are no regression', () => {
    const since = iso(NOW - 5 * S);
    expect(gateVerdict([look(healthy, 4, 4)], NOW, undefined, window({ since })).kind).toBe('baking');
    expect(gateVerdict([look(healthy, 0, 4)], NOW, undefined, window({ since })).kind).toBe('baking');
  });

  it('before the window opens, the gate is as before: a Failed target is unhealthy, not regressed', () => {
    const failed: HealthAssessment = { status: 'Failed', reason: 'CrashLoopBackOff', message: 'crash' };
    expect(gateVerdict([look(failed)], NOW, undefined, window()).kind).toBe('unhealthy');
  });

  it('a window that would end past the transaction deadline times out at once, saying why', () => {
    const verdict = gateVerdict([look(healthy)], NOW, undefined, window({ deadline: iso(NOW + 10 * S) }));
    expect(verdict).toEqual({
      kind: 'timedOut',
      pending: [],
      why: "healthy, but the 30s bake window would end after the transaction's deadline",
    });
  });

  it('an open window still running at the deadline times out', () => {
    const since = iso(NOW - 10 * S);
    expect(gateVerdict([look(healthy)], NOW, iso(NOW), window({ since })).kind).toBe('timedOut');
  });
});

describe('windowVerdict: the checks run during the window (the seam for metric analysis)', () => {
  const since = iso(NOW - 40 * S);
  it('a failed check is a regression named by the check', () => {
    const checks = [{ name: 'error-rate', state: 'Failed' as const, message: 'value 0.12 over 0.05' }];
    expect(windowVerdict([look(healthy)], { stableForMs: 30 * S, since, checks }, NOW)).toEqual({
      kind: 'regressed',
      byCheck: true,
      what: 'error-rate: value 0.12 over 0.05',
    });
  });

  it('a check still pending at the window end holds the window open', () => {
    const checks = [{ name: 'error-rate', state: 'Pending' as const, message: '2 of 3 samples' }];
    expect(windowVerdict([look(healthy)], { stableForMs: 30 * S, since, checks }, NOW).kind).toBe('baking');
    const passed = [{ name: 'error-rate', state: 'Passed' as const, message: 'ok' }];
    expect(windowVerdict([look(healthy)], { stableForMs: 30 * S, since, checks: passed }, NOW).kind).toBe(
      'stable',
    );
  });
});

describe('the window counting down', () => {
  it('stableForMs reads spec.health.stableFor, 0 when unset', () => {
    const txn = txnIn();
    expect(stableForMs(txn)).toBe(0);
    expect(stableForMs({ spec: { ...txn.spec, health: { stableFor: '1m30s' } } })).toBe(90 * S);
  });

  it('progress is rounded down to a tick of a tenth of the window, at least 5s', () => {
    expect(progressTickMs(30 * S)).toBe(5 * S);
    expect(progressTickMs(10 * 60 * S)).toBe(60 * S);
    expect(windowProgress(iso(NOW - 12_400), 30 * S, NOW)).toBe('stable for 10s of 30s');
    expect(windowProgress(iso(NOW - 95 * S), 10 * 60 * S, NOW)).toBe('stable for 1m of 10m');
    expect(windowProgress(iso(NOW - 99 * S), 30 * S, NOW)).toBe('stable for 30s of 30s');
  });
});
