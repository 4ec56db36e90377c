/** `janus history` names a source's drift corrections as such, from their records on the results branch. */
import { describe, expect, it } from 'vitest';
import { historyDetail, historyDocumentEntry, isDriftCorrection } from '../../../src/cli/history-view.ts';
import type { CommitInfo } from '../../../src/git/commit-info.ts';
import { type HistoryEntry, historyEntryOf } from '../../../src/results/history.ts';
import { renderTransactionResult } from '../../../src/results/render-transaction.ts';
import { correctionName } from '../../../src/sources/drift-decision.ts';
import { sourceTransaction } from '../../../src/sources/source-transaction.ts';

const COMMIT = '3f2a9c1'.padEnd(40, '0');
const who = { name: 'janus', email: 'janus@example.com', timestamp: 1_795_000_000, timezoneOffset: 0 };

/** The history entry of the record Janus writes when `name`, a transaction of source `web`, committed. */
function recorded(name: string, source = 'web'): HistoryEntry {
  const txn = sourceTransaction({
    source: { name: source, namespace: 'shop', spec: { path: 'deploy', serviceAccountName: 'deployer' } },
    name,
    file: `sources/${source}.yaml`,
    repository: 'https://git.example/shop.git',
    branch: 'main',
    commit: COMMIT,
    sequence: 42,
    changes: [
      {
        type: 'Apply',
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
        content: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } },
      },
    ],
    renderDigest: 'd'.repeat(64),
    left: [],
    stampKey: 'key',
  });
  const done = { ...txn, status: { phase: 'Committed' as const, items: [{ index: 0, committed: true }] } };
  const record = renderTransactionResult(done, { controllerVersion: '0.1.0', identity: 'janus' });
  const commit: CommitInfo = {
    oid: 'c'.repeat(40),
    tree: 't'.repeat(40),
    parents: [],
    message: record.message,
    author: who,
    committer: who,
  };
  const entry = historyEntryOf(commit);
  if (!entry) throw new Error('no history entry');
  return entry;
}

describe('janus history of a source', () => {
  it('lists a drift correction as such, with the commit whose render it put back', () => {
    const entry = recorded(correctionName('web', 42));
    expect(entry).toMatchObject({ transaction: 'shop/web-drift-42', sourceName: 'shop/web', source: COMMIT });
    expect(isDriftCorrection(entry)).toBe(true);
    expect(historyDetail(entry)).toBe('drift correction: 1/1 changes');
    expect(historyDocumentEntry(entry)).toEqual({ ...entry, driftCorrection: true });
  });

  it("lists a commit's transaction as before, also of a source whose name ends in -drift", () => {
    const commit = recorded('web-3f2a9c1');
    expect(historyDetail(commit)).toBe('1/1 changes');
    expect(historyDocumentEntry(commit)).toEqual(commit);
    const named = recorded('web-drift-3f2a9c1', 'web-drift');
    expect(isDriftCorrection(named)).toBe(false);
    expect(historyDetail(named)).toBe('1/1 changes');
  });

  it('never takes a transaction of another namespace, or one without a source, for a correction', () => {
    expect(isDriftCorrection({ transaction: 'other/web-drift-42', sourceName: 'shop/web' })).toBe(false);
    expect(isDriftCorrection({ transaction: 'shop/web-drift-42' })).toBe(false);
  });
});
