/**
 * A ROLLBACK file acts only on the Transaction its directory created: the decision (from Git and
 * the results branch) asks for a rollback only of a directory that passes the repository's policy
 * and whose record names a uid; the verdict (against the cluster) only when the Transaction now of
 * that name has that uid and the controller-written provenance of this repository and path.
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import {
  memoryReader,
  type ParseResult,
  parseTransactionDirectory,
  repositoryPolicy,
} from '../../../src/gitops/index.ts';
import {
  type DirectoryFacts,
  decideDirectory,
  outcomeAfter,
} from '../../../src/gitops/materialize-decision.ts';
import { noticeRefusal, renderRollbackRefusal } from '../../../src/gitops/materialize-records.ts';
import { rollbackVerdict } from '../../../src/gitops/rollback-verdict.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const UID = '7d3c1a2e-0000-4000-8000-000000000001';
const REPOSITORY = 'https://git.example.com/platform/deploys.git';
const PATH = 'transactions/deploy';

const txnYaml = (namespace: string) =>
  `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: deploy\n  namespace: ${namespace}\n` +
  'spec:\n  serviceAccountName: deployer\n';
const CHANGE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "2"\n';

/** transactions/deploy with a ROLLBACK file, parsed under a policy that allows namespace "shop" only. */
function withRollback(namespace: string): Promise<ParseResult> {
  const files = { 'transaction.yaml': txnYaml(namespace), '10-app.patch.yaml': CHANGE, ROLLBACK: 'INC-42' };
  return parseTransactionDirectory(
    memoryReader(Object.fromEntries(Object.entries(files).map(([n, t]) => [`${PATH}/${n}`, t]))),
    PATH,
    { policy: repositoryPolicy({ defaultNamespace: 'shop', allowedServiceAccounts: 'deployer' }) },
  );
}

function facts(parsed: ParseResult, more: Partial<DirectoryFacts> = {}): DirectoryFacts {
  return {
    path: PATH,
    name: 'deploy',
    kind: 'added',
    commit: 'a'.repeat(40),
    parsed,
    namespace: parsed.namespace,
    changedFiles: [],
    rollbackAdded: true,
    ...more,
  };
}

const committed = { phase: 'Committed', path: PATH, uid: UID };

describe('the decision on a ROLLBACK file of a recorded directory', () => {
  it('asks for the rollback of the recorded uid when the directory passes the policy', async () => {
    expect(decideDirectory(facts(await withRollback('shop')), committed)).toEqual([
      { do: 'request-rollback', reason: 'INC-42', file: `${PATH}/ROLLBACK`, uid: UID },
    ]);
  });

  it('refuses a directory outside the policy, whatever the results branch records (a forged record)', async () => {
    const outside = facts(await withRollback('payments'));
    expect(outside.namespace).toBe('payments');
    expect(decideDirectory(outside, committed)).toEqual([
      { do: 'notice', notice: 'rollback-outside-policy' },
    ]);
    const refusal = noticeRefusal('rollback-outside-policy', outside);
    expect(refusal).toEqual({ kind: 'policy', problems: [expect.stringContaining('"payments"')] });
    const record = renderRollbackRefusal(
      { namespace: 'payments', name: 'deploy', source: { repository: REPOSITORY, path: PATH } },
      refusal,
    );
    expect(record.files).toEqual({});
    expect(record.message).toMatch(/^payments\/deploy: rollback refused \(outside the policy\)\n/);
    expect(record.message).toContain('may not roll back payments/deploy either; nothing was requested');
  });

  it('refuses an edit that moves transaction.yaml to another namespace than its Transaction lives in', async () => {
    const moved = facts(await withRollback('shop'), {
      kind: 'modified',
      namespace: 'payments',
      changedFiles: ['ROLLBACK', 'transaction.yaml'],
    });
    const actions = decideDirectory(moved, committed);
    expect(actions[0]).toEqual({ do: 'notice', notice: 'rollback-outside-policy' });
    expect(noticeRefusal('rollback-outside-policy', moved)).toEqual({
      kind: 'policy',
      problems: ['transaction.yaml now names namespace shop; its Transaction lives in payments'],
    });
  });

  it('refuses a record that names no uid', async () => {
    expect(decideDirectory(facts(await withRollback('shop')), { phase: 'Committed', path: PATH })).toEqual([
      { do: 'notice', notice: 'rollback-unknown-uid' },
    ]);
  });

  it('asks with the uid just created when the directory was materialized earlier in the same poll', async () => {
    const created = outcomeAfter({ do: 'materialize' }, facts(await withRollback('shop')), UID);
    expect(created).toEqual({ phase: 'Pending', path: PATH, uid: UID });
    const later = facts(await withRollback('shop'), { kind: 'modified', changedFiles: ['ROLLBACK'] });
    expect(decideDirectory(later, created)).toEqual([
      { do: 'request-rollback', reason: 'INC-42', file: `${PATH}/ROLLBACK`, uid: UID },
    ]);
  });
});

function live(
  more: { uid?: string; annotations?: Record<string, string>; phase?: string } = {},
): Transaction {
  return aTransaction({
    name: 'deploy',
    uid: more.uid ?? UID,
    annotations: more.annotations ?? sourceAnnotations({ repository: REPOSITORY, path: PATH }),
    status: { phase: (more.phase ?? 'Committed') as 'Committed' },
  });
}

const origin = { uid: UID, repository: REPOSITORY, path: PATH };

describe('the verdict on the Transaction now of that name', () => {
  it('requests the rollback of the Transaction this directory created, once', () => {
    expect(rollbackVerdict(live(), origin)).toEqual({ kind: 'request' });
    expect(rollbackVerdict(live({ phase: 'Verifying' }), origin)).toEqual({ kind: 'request' });
    const asked = live({
      annotations: {
        'tx.janus.io/source-repository': REPOSITORY,
        'tx.janus.io/source-path': PATH,
        'tx.janus.io/request-rollback': 'INC-42',
      },
    });
    expect(rollbackVerdict(asked, origin)).toEqual({ kind: 'requested' });
  });

  it('leaves alone a namesake created after retention freed the name, even one from the same directory', () => {
    const namesake = live({ uid: '7d3c1a2e-0000-4000-8000-000000000002' });
    expect(rollbackVerdict(namesake, origin)).toEqual({
      kind: 'refused',
      refusal: {
        kind: 'not-created-here',
        uid: '7d3c1a2e-0000-4000-8000-000000000002',
        recordedUid: UID,
        origin: `${PATH} in ${REPOSITORY}`,
      },
    });
  });

  it("leaves alone a Transaction a forged record points at by its uid: a tenant's, or another directory's", () => {
    const tenants = rollbackVerdict(live({ annotations: {} }), origin);
    expect(tenants).toMatchObject({
      refusal: { kind: 'not-created-here', origin: 'no transaction directory' },
    });
    const other = live({
      annotations: {
        'tx.janus.io/source-repository': 'https://git.example.com/other.git',
        'tx.janus.io/source-path': PATH,
      },
    });
    expect(rollbackVerdict(other, origin)).toMatchObject({
      kind: 'refused',
      refusal: { kind: 'not-created-here' },
    });
    const record = renderRollbackRefusal(
      { namespace: 'shop', name: 'deploy', source: { repository: REPOSITORY, path: PATH } },
      { kind: 'not-created-here', uid: 'u-2', recordedUid: UID, origin: 'no transaction directory' },
    );
    expect(record.message).toContain(
      `the Transaction shop/deploy in the cluster (uid u-2, from no transaction directory) is not the one this directory created (uid ${UID})`,
    );
  });

  it('says why when there is nothing to roll back', () => {
    expect(rollbackVerdict(undefined, origin)).toEqual({ kind: 'refused', refusal: { kind: 'gone' } });
    const deleting = live();
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    expect(rollbackVerdict(deleting, origin)).toEqual({ kind: 'refused', refusal: { kind: 'gone' } });
    for (const phase of ['RolledBack', 'Failed', 'RollingBack'])
      expect(rollbackVerdict(live({ phase }), origin)).toEqual({
        kind: 'refused',
        refusal: { kind: 'phase', phase },
      });
  });
});
