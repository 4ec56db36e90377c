/**
 * SPEC §3's central promise over the in-memory API: a saga killed after any one of its API
 * requests, and restarted, ends exactly where the uninterrupted run ends, with no duplicate
 * apply, no false conflict and no leaked Lease. The sagas of test/crash/commit.test.ts,
 * rollback.test.ts, sops-commit.test.ts and source-transaction.test.ts, killed at every request.
 */
import { describe, expect, it } from 'vitest';
import { SOURCE_COMMITTED, SOURCE_ROLLED_BACK } from '../../support/crash/crash-scenarios.ts';
import { expectEveryKillEndsAsBaseline, MATRIX_TIMEOUT_MS } from './crash-matrix.ts';
import { configMapSaga, sopsSaga, sourceSaga } from './scenarios.ts';

describe('a saga killed after every API request, in memory', () => {
  it(
    'four changes of every type: Committed, each target written once by its change',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(configMapSaga(false), (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.targets).toEqual({
          created: { data: { fresh: 'yes' }, appliedBy: 'crashy#0' },
          updated: { data: { new: 'value' }, appliedBy: 'crashy#1' },
          patched: { data: { kept: 'yes', changed: 'after', added: 'new' }, appliedBy: 'crashy#2' },
          deleted: undefined,
          refused: undefined,
        });
      }),
  );

  it(
    'a fifth change refused at commit: RolledBack, every target as it was',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(configMapSaga(true), (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toEqual({
          created: undefined,
          updated: { data: { old: 'value' }, appliedBy: undefined },
          patched: { data: { kept: 'yes', changed: 'before' }, appliedBy: undefined },
          deleted: { data: { precious: 'data' }, appliedBy: undefined },
          refused: undefined,
        });
      }),
  );

  it(
    'a SOPS-encrypted Secret: Committed, the decrypted value written once',
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(sopsSaga(), (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.targets).toEqual({ password: 'rotated', appliedBy: 'crashy#0' });
        // The key is read as part of the saga, once for the dry run and once for the commit, so a
        // kill lands on each read too.
        expect(
          baseline.requests.filter((r) => r.endsWith('GET /api/v1/namespaces/shop/secrets/janus-sops-age')),
        ).toHaveLength(2);
      }),
  );

  it(
    "a source's transaction (an Apply create, an Apply update dropping a field, a prune): Committed, the source's manager owning what it applied",
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(sourceSaga(false), (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.targets).toEqual(SOURCE_COMMITTED);
      }),
  );

  it(
    "the same with a fourth change refused at commit: RolledBack, the update re-applied and the pruned object re-created by the source's manager",
    { timeout: MATRIX_TIMEOUT_MS },
    () =>
      expectEveryKillEndsAsBaseline(sourceSaga(true), (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toEqual(SOURCE_ROLLED_BACK);
      }),
  );
});
