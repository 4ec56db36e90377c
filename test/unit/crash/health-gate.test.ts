/**
 * The health gate, its bake window and the window's metric analysis, killed after every API
 * request over the in-memory API: the sagas of test/crash/health-gate.test.ts,
 * bake-window.test.ts and analysis-window.test.ts from their first request to their last. The
 * clock is the test's, so a window of a minute costs no wall time; the Deployment's rollout is
 * the simulated cluster's (simulated-cluster.ts), the checks' answers are fixed.
 */
import { describe, expect, it } from 'vitest';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { expectEveryKillEndsAsBaseline, type InMemoryOutcome, MATRIX_TIMEOUT_MS } from './crash-matrix.ts';
import { analysedRollout, rolloutSaga } from './scenarios.ts';

const running = (image: string, release: string) => ({
  deployment: { image, available: 2, updated: 2, replicas: 2 },
  config: { release },
});
const readyMessage = (o: InMemoryOutcome) =>
  o.txn.status?.conditions?.find((c) => c.type === 'Ready')?.message;

describe('a health gate killed after every API request, in memory', () => {
  it('that ends healthy: Committed, the new version running', { timeout: MATRIX_TIMEOUT_MS }, () =>
    expectEveryKillEndsAsBaseline(rolloutSaga(POD_IMAGES.readyAlternative), (baseline) => {
      expect(baseline.phase).toBe('Committed');
      expect(baseline.targets).toEqual(running(POD_IMAGES.readyAlternative, 'v2'));
    }),
  );

  it('that ends unhealthy: RolledBack, the old version running', { timeout: MATRIX_TIMEOUT_MS }, () =>
    expectEveryKillEndsAsBaseline(rolloutSaga(POD_IMAGES.crashLoop), (baseline) => {
      expect(baseline.phase).toBe('RolledBack');
      expect(readyMessage(baseline)).toMatch(/container app is in CrashLoopBackOff/);
      expect(baseline.targets).toEqual(running(POD_IMAGES.ready, 'v1'));
    }),
  );
});

describe('a bake window killed after every API request, in memory', () => {
  it(
    'a rollout that crash-loops inside it: RolledBack, the old version running',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(
        rolloutSaga(POD_IMAGES.flapping, { timeout: '2m', stableFor: '1m' }),
        (baseline) => {
          expect(baseline.phase).toBe('RolledBack');
          expect(readyMessage(baseline)).toMatch(/regressed \d+s into the 1m bake window/);
          expect(baseline.targets).toEqual(running(POD_IMAGES.ready, 'v1'));
        },
      ),
  );

  it('a healthy rollout: Committed once the window has passed', { timeout: MATRIX_TIMEOUT_MS }, () =>
    expectEveryKillEndsAsBaseline(
      rolloutSaga(POD_IMAGES.readyAlternative, { timeout: '2m', stableFor: '10s' }),
      (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.txn.status?.health?.message).toMatch(/stable for 10s/);
        expect(baseline.targets).toEqual(running(POD_IMAGES.readyAlternative, 'v2'));
      },
    ),
  );
});

describe('metric analysis in the bake window killed after every API request, in memory', () => {
  it(
    'checks that pass: Committed once the window has gone by, every check measured',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(analysedRollout('/ok', 0.01, '8s'), (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.txn.status?.health?.analysis).toEqual([
          expect.objectContaining({ name: 'smoke', failed: 0, measured: expect.any(Number) }),
          expect.objectContaining({ name: 'errors', failed: 0, measured: expect.any(Number) }),
        ]);
        expect(baseline.targets).toEqual(running(POD_IMAGES.readyAlternative, 'v2'));
      }),
  );

  it(
    'a check that fails: RolledBack at the first failed measurement, the old version running',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(analysedRollout('/failing', 0.01, '1m'), (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(readyMessage(baseline)).toMatch(
          /check "smoke" failed: GET http:\/\/smoke\.shop\.svc\/failing answered 503/,
        );
        expect(baseline.targets).toEqual(running(POD_IMAGES.ready, 'v1'));
      }),
  );
});
