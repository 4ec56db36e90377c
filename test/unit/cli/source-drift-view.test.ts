/** What `janus status` prints of each Source's drift: count, last check, correction, backoff. */
import { describe, expect, it } from 'vitest';
import type { Source, SourceStatus } from '../../../src/api/v1alpha1/index.ts';
import { renderSourceDriftTable, sourceDriftRow } from '../../../src/cli/source-drift-view.ts';
import { ago, NOW } from './fixtures.ts';

const COMMIT = '3f2a9c1'.padEnd(40, '0');
const source = (status: SourceStatus, drift: Record<string, unknown> = { correct: true }): Source => ({
  apiVersion: 'tx.janus.io/v1alpha1',
  kind: 'Source',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { path: 'deploy', serviceAccountName: 'deployer', drift },
  status: {
    lastApplied: { revision: COMMIT, shortRevision: '3f2a9c1', transaction: 'web-3f2a9c1' },
    ...status,
  },
});
const inMinutes = (m: number) => new Date(NOW + m * 60_000).toISOString();
/** The cells after NAMESPACE, SOURCE, APPLIED. */
const cells = (s: Source) => sourceDriftRow(s, NOW).slice(3);

describe('the Sources of janus status', () => {
  it('shows a source never checked, in sync, or with drift checks off', () => {
    expect(sourceDriftRow(source({}), NOW)).toEqual(['shop', 'web', '3f2a9c1', '', 'never', '', '']);
    expect(cells(source({ drift: { checkedAt: ago(40), count: 0 } }))).toEqual(['0', '40s ago', '', '']);
    expect(cells(source({}, { interval: '0s' }))).toEqual(['off', '', '', '']);
  });

  it('shows drift only reported, or to be corrected at the next check', () => {
    const drifted = { checkedAt: ago(40), count: 2 };
    expect(cells(source({ drift: drifted }, { correct: false }))).toEqual([
      '2',
      '40s ago',
      'off (report only)',
      '',
    ]);
    expect(cells(source({ drift: drifted }))).toEqual(['2', '40s ago', '', 'at the next check']);
  });

  it('shows the correction in flight, and how the last one ended', () => {
    const running = {
      transaction: 'web-drift-42',
      outcome: 'InProgress' as const,
      objects: 2,
      time: ago(20),
    };
    expect(cells(source({ drift: { checkedAt: ago(30), count: 2, correction: running } }))).toEqual([
      '2',
      '30s ago',
      'web-drift-42 InProgress, started 20s ago',
      '',
    ]);
    expect(cells(source({ drift: { count: 2, correction: { ...running, failures: 3 } } }))[2]).toBe(
      'web-drift-42 InProgress, started 20s ago, after 3 failed',
    );
    const committed = { ...running, outcome: 'Committed' as const, time: ago(5) };
    expect(cells(source({ drift: { checkedAt: ago(3), count: 0, correction: committed } }))).toEqual([
      '0',
      '3s ago',
      'web-drift-42 Committed 5s ago',
      '',
    ]);
  });

  it('shows the backoff after failed corrections: how many, and when the next may run', () => {
    const failed = {
      transaction: 'web-drift-43',
      outcome: 'RolledBack' as const,
      objects: 2,
      time: ago(180),
      failures: 2,
      retryAfter: inMinutes(17),
    };
    expect(cells(source({ drift: { checkedAt: ago(60), count: 2, correction: failed } }))).toEqual([
      '2',
      '60s ago',
      'web-drift-43 RolledBack 3m ago, 2 failed in a row',
      `in 17m (${inMinutes(17).replace('.000Z', 'Z')})`,
    ]);
    // Once passed, the next check that still finds drift corrects it.
    const passed = { ...failed, retryAfter: ago(1) };
    expect(cells(source({ drift: { checkedAt: ago(60), count: 2, correction: passed } }))[3]).toBe(
      'at the next check',
    );
  });

  it('prints a titled table after the Transactions, or nothing without Sources', () => {
    expect(renderSourceDriftTable([], NOW)).toBe('');
    const text = renderSourceDriftTable([source({ drift: { checkedAt: ago(40), count: 1 } })], NOW);
    expect(text).toMatch(
      /^\nSources \(drift\):\nNAMESPACE\s+SOURCE\s+APPLIED\s+DRIFT\s+CHECKED\s+CORRECTION\s+NEXT CORRECTION\nshop\s+web\s+3f2a9c1\s+1\s+40s ago\s+at the next check\n$/,
    );
  });
});
