/** The materializer's decision per directory: what Git shows × what the results branch records. */
import { describe, expect, it } from 'vitest';
import type { DirectoryChangeKind } from '../../../src/git/changes.ts';
import {
  memoryReader,
  type ParseResult,
  parseTransactionDirectory,
  repositoryPolicy,
} from '../../../src/gitops/index.ts';
import {
  type DirectoryAction,
  type DirectoryFacts,
  decideDirectory,
  outcomeAfter,
} from '../../../src/gitops/materialize-decision.ts';
import type { RecordedOutcome } from '../../../src/results/results-reader.ts';

const TXN = `apiVersion: tx.janus.io/v1alpha1
kind: Transaction
metadata:
  name: deploy
spec:
  serviceAccountName: deployer
`;
const CHANGE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "2"\n';

async function parsed(files: Record<string, string>): Promise<ParseResult> {
  const prefixed = Object.fromEntries(Object.entries(files).map(([n, t]) => [`transactions/deploy/${n}`, t]));
  return parseTransactionDirectory(memoryReader(prefixed), 'transactions/deploy', {
    policy: repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'deployer' }),
  });
}

const valid = () => parsed({ 'transaction.yaml': TXN, '10-app.patch.yaml': CHANGE });
const invalid = () =>
  parsed({ 'transaction.yaml': TXN.replace('Transaction\n', 'Transactoin\n'), '10-app.patch.yaml': CHANGE });
const withRollback = (reason = 'broke checkout') =>
  parsed({ 'transaction.yaml': TXN, '10-app.patch.yaml': CHANGE, ROLLBACK: reason });

function facts(
  kind: DirectoryChangeKind,
  result: ParseResult | undefined,
  more: Partial<DirectoryFacts> = {},
): DirectoryFacts {
  return {
    path: 'transactions/deploy',
    name: 'deploy',
    kind,
    commit: 'a'.repeat(40),
    parsed: result,
    namespace: 'default',
    changedFiles: [],
    rollbackAdded: result?.rollback !== undefined && kind === 'added',
    ...more,
  };
}

const UID = '7d3c1a2e-0000-4000-8000-000000000001';
const recorded = (phase: string): RecordedOutcome => ({ phase, path: 'transactions/deploy', uid: UID });
const decide = (f: DirectoryFacts, r?: RecordedOutcome): string[] =>
  decideDirectory(f, r).map((a: DirectoryAction) =>
    a.do === 'ignore-edit'
      ? `ignore-edit ${a.files.join(',')}`
      : a.do === 'notice'
        ? `notice ${a.notice}`
        : a.do,
  );

describe('a directory nothing is recorded about', () => {
  it('is materialized when valid, whether Git shows it added or modified', async () => {
    expect(decide(facts('added', await valid()))).toEqual(['materialize']);
    expect(decide(facts('modified', await valid()))).toEqual(['materialize']);
  });

  it('is rejected when invalid', async () => {
    expect(decide(facts('added', await invalid()))).toEqual(['reject']);
  });

  it('is not applied when it already holds a ROLLBACK file', async () => {
    expect(decide(facts('added', await withRollback()))).toEqual(['notice rollback-before-apply']);
  });

  it('changes nothing when removed', () => {
    expect(decide(facts('removed', undefined))).toEqual([]);
  });
});

describe('a rejected directory', () => {
  it('is applied once fixed, and rejected again while still broken', async () => {
    expect(decide(facts('modified', await valid()), recorded('Rejected'))).toEqual(['materialize']);
    expect(decide(facts('modified', await invalid()), recorded('Rejected'))).toEqual(['reject']);
  });
});

describe('a materialized directory', () => {
  for (const phase of ['Pending', 'Committing', 'Committed', 'RolledBack', 'Failed', 'Unknown']) {
    it(`is never applied again when seen anew (${phase})`, async () => {
      expect(decide(facts('added', await valid()), recorded(phase))).toEqual([]);
    });
  }

  it('reports an edit as ignored, naming the files', async () => {
    const edit = facts('modified', await valid(), {
      changedFiles: ['10-app.patch.yaml', '20-new.patch.yaml'],
    });
    expect(decide(edit, recorded('Committed'))).toEqual(['ignore-edit 10-app.patch.yaml,20-new.patch.yaml']);
  });

  it('asks for a rollback when a ROLLBACK file is added, with its text as the reason', async () => {
    const added = facts('modified', await withRollback('INC-42: checkout broken'), {
      changedFiles: ['ROLLBACK'],
      rollbackAdded: true,
    });
    expect(decideDirectory(added, recorded('Committed'))).toEqual([
      {
        do: 'request-rollback',
        reason: 'INC-42: checkout broken',
        file: 'transactions/deploy/ROLLBACK',
        uid: UID,
      },
    ]);
  });

  it('asks for the rollback and reports the other edits of the same commit', async () => {
    const both = facts('modified', await withRollback(), {
      changedFiles: ['10-app.patch.yaml', 'ROLLBACK'],
      rollbackAdded: true,
    });
    expect(decide(both, recorded('Committed'))).toEqual([
      'request-rollback',
      'ignore-edit 10-app.patch.yaml',
    ]);
  });

  it('does not ask twice when a re-read commit still shows the ROLLBACK file after the rollback', async () => {
    expect(decide(facts('added', await withRollback()), recorded('RolledBack'))).toEqual([]);
    expect(decide(facts('added', await withRollback()), recorded('Committed'))).toEqual(['request-rollback']);
  });

  it('reports an edit of an existing ROLLBACK file as an ignored edit', async () => {
    const edit = facts('modified', await withRollback('new text'), {
      changedFiles: ['ROLLBACK'],
      rollbackAdded: false,
    });
    expect(decide(edit, recorded('RolledBack'))).toEqual(['ignore-edit ROLLBACK']);
  });

  it('changes nothing when removed', () => {
    expect(decide(facts('removed', undefined), recorded('Committed'))).toEqual([]);
  });
});

describe('a baseline directory', () => {
  it('is never applied, and edits and rollbacks of it are reported', async () => {
    expect(decide(facts('added', await valid()), recorded('Baseline'))).toEqual([]);
    expect(
      decide(facts('modified', await valid(), { changedFiles: ['10-app.patch.yaml'] }), recorded('Baseline')),
    ).toEqual(['ignore-edit 10-app.patch.yaml']);
    const rollback = facts('modified', await withRollback(), {
      changedFiles: ['ROLLBACK'],
      rollbackAdded: true,
    });
    expect(decide(rollback, recorded('Baseline'))).toEqual(['notice rollback-of-baseline']);
  });
});

describe('outcomes decided earlier in the same poll', () => {
  it('make a later commit of the same poll see the directory as materialized or rejected', async () => {
    const added = facts('added', await valid());
    const after = outcomeAfter({ do: 'materialize' }, added);
    expect(after?.phase).toBe('Pending');
    const edit = facts('modified', await valid(), { changedFiles: ['10-app.patch.yaml'] });
    expect(decide(edit, after)).toEqual(['ignore-edit 10-app.patch.yaml']);
    expect(outcomeAfter({ do: 'reject' }, added)?.phase).toBe('Rejected');
    expect(outcomeAfter({ do: 'ignore-edit', files: [] }, added)).toBeUndefined();
  });
});

describe('with --verify-signatures', () => {
  const refused = { ok: false as const, commit: 'b'.repeat(40), message: 'the commit is not signed' };
  const signed = { ok: true as const, signers: ['alice@example.com'] };

  it('rejects a valid directory not every commit of which is signed, added or modified, unrecorded or rejected', async () => {
    for (const kind of ['added', 'modified'] as const) {
      expect(decide(facts(kind, await valid(), { signatures: refused }))).toEqual(['reject']);
      expect(decide(facts(kind, await valid(), { signatures: refused }), recorded('Rejected'))).toEqual([
        'reject',
      ]);
      expect(decide(facts(kind, await valid(), { signatures: signed }))).toEqual(['materialize']);
    }
  });

  it('refuses a ROLLBACK file added by an unsigned commit, and requests one added by a signed commit', async () => {
    const unsigned = facts('modified', await withRollback(), {
      rollbackAdded: true,
      changedFiles: ['ROLLBACK'],
      signatures: refused,
    });
    expect(decide(unsigned, recorded('Committed'))).toEqual(['notice rollback-unsigned']);
    expect(decide({ ...unsigned, signatures: signed }, recorded('Committed'))).toEqual(['request-rollback']);
  });

  it('changes nothing for a directory already applied: an edit is ignored, signed or not', async () => {
    const edit = facts('modified', await valid(), {
      changedFiles: ['10-app.patch.yaml'],
      signatures: refused,
    });
    expect(decide(edit, recorded('Committed'))).toEqual(['ignore-edit 10-app.patch.yaml']);
  });
});
