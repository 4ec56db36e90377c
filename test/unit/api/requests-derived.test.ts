/**
 * Everyone who asks or answers a request decides from the requests table, and from nothing else:
 * with the table's verdict forced to each value in turn, `janus rollback`, `janus cancel`, a
 * ROLLBACK file (the poller's decision and the verdict against the cluster) and the controller
 * all follow it. A caller that kept its own list of phases would ignore the forced verdict.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Verdict } from '../../../src/api/requests.ts';
import {
  ANNOTATION_CANCEL,
  ANNOTATION_REQUEST_ROLLBACK,
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  PHASES,
  type Phase,
} from '../../../src/api/v1alpha1/index.ts';
import { decideCancel } from '../../../src/cli/cancel-request.ts';
import { decideRollback } from '../../../src/cli/rollback-request.ts';
import { memoryReader, parseTransactionDirectory, repositoryPolicy } from '../../../src/gitops/index.ts';
import { decideDirectory } from '../../../src/gitops/materialize-decision.ts';
import { rollbackVerdict } from '../../../src/gitops/rollback-verdict.ts';
import { decide } from '../../../src/saga/decide.ts';
import { item, txnIn } from '../saga/transaction-fixture.ts';

const forced = vi.hoisted(() => ({ verdict: undefined as Verdict | undefined }));

vi.mock('../../../src/api/requests.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/api/requests.ts')>();
  return {
    ...real,
    acceptance: (...args: Parameters<typeof real.acceptance>) =>
      forced.verdict ? { verdict: forced.verdict, message: 'as the table says' } : real.acceptance(...args),
    verdictIn: (...args: Parameters<typeof real.verdictIn>) => forced.verdict ?? real.verdictIn(...args),
  };
});

const VERDICTS: readonly Verdict[] = ['accept', 'wait', 'underway', 'done', 'refuse'];
const cases = VERDICTS.flatMap((verdict) => PHASES.map((phase) => [verdict, phase] as const));

/** What a person at the CLI is told, per verdict. */
const CLI: Record<Verdict, string> = {
  accept: 'request',
  wait: 'refused',
  underway: 'underway',
  done: 'done',
  refuse: 'refused',
};

beforeEach(() => {
  forced.verdict = undefined;
});

describe('decisions derived from the requests table', () => {
  it.each(cases)('janus cancel and janus rollback follow the table (%s in %s)', (verdict, phase) => {
    forced.verdict = verdict;
    const txn = txnIn({ phase, items: [item.committed()] });
    for (const decision of [decideCancel(txn), decideRollback(txn)]) {
      expect(decision.kind).toBe(CLI[verdict]);
      if (verdict !== 'accept') expect(decision.message).toBe('as the table says');
    }
  });

  it.each(cases)('the controller follows the table (%s in %s)', (verdict, phase) => {
    forced.verdict = verdict;
    const step = decide(
      txnIn({ phase, items: [item.committed()], annotations: { [ANNOTATION_CANCEL]: 'x' } }),
      0,
    );
    if (verdict === 'accept')
      expect(step).toEqual({ do: 'beginRollback', cause: 'Cancelled', consumeAnnotation: ANNOTATION_CANCEL });
    else if (verdict === 'wait') {
      // Kept: the saga goes on as without it.
      expect(step.do).not.toBe('dropAnnotation');
      expect(step).not.toMatchObject({ consumeAnnotation: ANNOTATION_CANCEL });
    } else
      expect(step).toEqual({ do: 'dropAnnotation', annotation: ANNOTATION_CANCEL, why: 'as the table says' });
  });

  it.each(cases)('a ROLLBACK file against the cluster follows the table (%s in %s)', (verdict, phase) => {
    forced.verdict = verdict;
    const origin = { uid: 'u-1', repository: 'https://git.example.com/r.git', path: 'transactions/deploy' };
    const current = txnIn({
      phase,
      annotations: {
        [ANNOTATION_SOURCE_REPOSITORY]: origin.repository,
        [ANNOTATION_SOURCE_PATH]: origin.path,
      },
    });
    current.metadata.uid = origin.uid;
    const takes = verdict === 'accept' || verdict === 'wait';
    expect(rollbackVerdict(current, origin)).toEqual(
      takes ? { kind: 'request' } : { kind: 'refused', refusal: { kind: 'phase', phase } },
    );
    // Already requested stays already requested, whatever the phase.
    current.metadata.annotations = { ...current.metadata.annotations, [ANNOTATION_REQUEST_ROLLBACK]: 'x' };
    expect(rollbackVerdict(current, origin)).toEqual({ kind: 'requested' });
  });

  it.each(cases)(
    'the poller, seeing a ROLLBACK file again, follows the table (%s in %s)',
    async (verdict, phase) => {
      forced.verdict = verdict;
      const files = {
        'transaction.yaml':
          'apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: deploy\nspec:\n  serviceAccountName: deployer\n',
        '10-app.patch.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "2"\n',
        ROLLBACK: 'INC-42',
      };
      const parsed = await parseTransactionDirectory(
        memoryReader(
          Object.fromEntries(Object.entries(files).map(([n, t]) => [`transactions/deploy/${n}`, t])),
        ),
        'transactions/deploy',
        { policy: repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'deployer' }) },
      );
      const actions = decideDirectory(
        {
          path: 'transactions/deploy',
          name: 'deploy',
          kind: 'added',
          commit: 'a'.repeat(40),
          parsed,
          namespace: 'default',
          changedFiles: [],
          rollbackAdded: true,
        },
        { phase: phase satisfies Phase, path: 'transactions/deploy', uid: 'u-1' },
      );
      const takes = verdict === 'accept' || verdict === 'wait';
      expect(actions.map((a) => a.do)).toEqual(takes ? ['request-rollback'] : []);
    },
  );
});
