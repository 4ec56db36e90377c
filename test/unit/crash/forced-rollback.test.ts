/**
 * The forced rollback of a StatefulSet (issue 23) killed after every API request over the
 * in-memory API: the saga of test/crash/forced-rollback.test.ts, whose rollback records the bad
 * revision, restores the template and deletes the pod the set's controller would wait for
 * forever, ends RolledBack with every pod Ready on the old image wherever it is killed.
 */
import { describe, expect, it } from 'vitest';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { expectEveryKillEndsAsBaseline, MATRIX_TIMEOUT_MS } from './crash-matrix.ts';
import { forcedRollbackSaga } from './scenarios.ts';

describe('a StatefulSet forced rollback killed after every API request, in memory', () => {
  it(
    'ends RolledBack with the old pods Ready, as the uninterrupted run',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(forcedRollbackSaga(), (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toEqual(
          ['db-0', 'db-1', 'db-2'].map((name) => ({ name, image: POD_IMAGES.ready, ready: true })),
        );
        expect(
          baseline.requests.filter((r) => r.endsWith('DELETE /api/v1/namespaces/shop/pods/db-2')),
        ).toHaveLength(1);
      }),
  );
});
