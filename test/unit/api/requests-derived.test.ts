/**
 * Everyone who asks or answers a request decides as the requests table says, in every phase:
 * `janus rollback`, `janus cancel`, a ROLLBACK file (the poller's decision and the verdict
 * against the cluster) and the controller. The refusals carry the table's own words, so a caller
 * that kept its own list of phases, or its own messages, differs somewhere below.
 */
import { describe, expect, it } from 'vitest';
import { acceptance, type Verdict, verdictIn } from '../../../src/api/requests.ts';
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

const phases = PHASES.map((phase) => [phase] as const);

/** What a person at the CLI is told, per verdict. */
const CLI: Record<Verdict, string> = {
  accept: 'request',
  wait: 'refused',
  underway: 'underway',
  done: 'done',
  refuse: 'refused',
};

describe('decisions derived from the requests table', () => {
  it.each(phases)('janus cancel and janus rollback follow the table (in %s)', (phase) => {
    const txn = txnIn({ phase, items: [item.committed()] });
    const rollback = acceptance('rollback', txn);
    const asked = [
      [decideCancel(txn), acceptance('cancel', txn)],
      [decideRollback(txn), rollback.instead ? acceptance(rollback.instead, txn) : rollback],
    ] as const;
    for (const [decision, table] of asked) {
      expect(decision.kind).toBe(CLI[table.verdict]);
      if (table.verdict !== 'accept') expect(decision.message).toBe(table.message);
    }
  });

  it.each(phases)('the controller follows the table (in %s)', (phase) => {
    const txn = txnIn({ phase, items: [item.committed()], annotations: { [ANNOTATION_CANCEL]: 'x' } });
    const { verdict, message } = acceptance('cancel', txn);
    const step = decide(txn, 0);
    if (verdict === 'accept')
      expect(step).toEqual({ do: 'beginRollback', cause: 'Cancelled', consumeAnnotation: ANNOTATION_CANCEL });
    else if (verdict === 'wait') {
      // Kept: the saga goes on as without it.
      expect(step.do).not.toBe('dropAnnotation');
      expect(step).not.toMatchObject({ consumeAnnotation: ANNOTATION_CANCEL });
    } else expect(step).toEqual({ do: 'dropAnnotation', annotation: ANNOTATION_CANCEL, why: message });
  });

  it.each(phases)('a ROLLBACK file against the cluster follows the table (in %s)', (phase) => {
    const origin = { uid: 'u-1', repository: 'https://git.example.com/r.git', path: 'transactions/deploy' };
    const current = txnIn({
      phase,
      annotations: {
        [ANNOTATION_SOURCE_REPOSITORY]: origin.repository,
        [ANNOTATION_SOURCE_PATH]: origin.path,
      },
    });
    current.metadata.uid = origin.uid;
    const verdict = acceptance('rollback', current).verdict;
    const takes = verdict === 'accept' || verdict === 'wait';
    expect(rollbackVerdict(current, origin)).toEqual(
      takes ? { kind: 'request' } : { kind: 'refused', refusal: { kind: 'phase', phase } },
    );
    // Already requested stays already requested, whatever the phase.
    current.metadata.annotations = { ...current.metadata.annotations, [ANNOTATION_REQUEST_ROLLBACK]: 'x' };
    expect(rollbackVerdict(current, origin)).toEqual({ kind: 'requested' });
  });

  it('covers every verdict the table gives somewhere', () => {
    const seen = new Set(
      (['cancel', 'rollback', 'retry-rollback'] as const).flatMap((r) => PHASES.map((p) => verdictIn(r, p))),
    );
    expect([...seen].sort()).toEqual(['accept', 'done', 'refuse', 'underway', 'wait']);
  });

  it.each(phases)('the poller, seeing a ROLLBACK file again, follows the table (in %s)', async (phase) => {
    const verdict = verdictIn('rollback', phase);
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
  });
});
