import { describe, expect, it } from 'vitest';
import {
  nextStepHint,
  progress,
  recentEvents,
  renderTransactionDetail,
  renderTransactionTable,
  transactionRow,
} from '../../../src/cli/status-view.ts';
import { ago, item, NOW, txn } from './fixtures.ts';

const committed = txn({
  phase: 'Committed',
  items: [0, 1, 2].map((i) => item(i, { committed: true })),
  conditions: [{ type: 'Ready', status: 'True', reason: 'Committed', message: '3 change(s) committed' }],
});

describe('the Transaction table', () => {
  it('has a row per Transaction: namespace, name, phase, committed/total, age, Ready reason', () => {
    expect(transactionRow(committed, NOW)).toEqual([
      'shop',
      'deploy-v2',
      'Committed',
      '3/3',
      '90s',
      'Committed',
    ]);
  });

  it('shows a new Transaction as Pending with 0 of its changes', () => {
    expect(transactionRow(txn(), NOW)).toEqual(['shop', 'deploy-v2', 'Pending', '0/3', '90s', '']);
  });

  it('prefers the progress the controller wrote', () => {
    expect(progress({ ...committed, status: { ...committed.status, progress: '2/3' } })).toBe('2/3');
  });

  it('says so when there is nothing to list', () => {
    expect(renderTransactionTable([], NOW, 'in namespace shop')).toBe(
      'No Transactions found in namespace shop.\n',
    );
    expect(renderTransactionTable([committed], NOW, '')).toMatch(
      /^NAMESPACE\s+NAME\s+PHASE\s+CHANGES\s+AGE\s+REASON\n/,
    );
  });
});

describe('one Transaction in detail', () => {
  const failed = txn({
    phase: 'Failed',
    items: [
      item(0, { committed: true, rolledBack: true }),
      item(1, { committed: true, conflict: true, error: 'Deployment shop/web was changed by someone else' }),
      item(2, { error: 'Forbidden: secrets is forbidden' }),
    ],
    conditions: [
      { type: 'Stalled', status: 'True', reason: 'RollbackConflict', message: 'left as they are' },
    ],
  });

  it('lists every change with its target, outcome and error', () => {
    const text = renderTransactionDetail(failed, [], NOW);
    expect(text).toMatch(/0\s+Patch\s+v1 ConfigMap shop\/app-config\s+rolled-back/);
    expect(text).toMatch(
      /1\s+Patch\s+apps\/v1 Deployment shop\/web\s+conflict\s+Deployment shop\/web was changed/,
    );
    expect(text).toMatch(/2\s+Update\s+v1 Secret shop\/web-credentials\s+failed\s+Forbidden/);
    expect(text).toContain('Stalled');
  });

  it('names the targets from the spec before the controller wrote a status', () => {
    expect(renderTransactionDetail(txn(), [], NOW)).toMatch(
      /2\s+Update\s+v1 Secret shop\/web-credentials\s+pending/,
    );
  });

  it('shows the latest events, oldest first, with repeat counts', () => {
    const events = [
      { type: 'Normal', reason: 'Committed', message: 'done', lastTimestamp: ago(5) },
      {
        type: 'Warning',
        reason: 'LockWait',
        message: 'held by shop/other',
        lastTimestamp: ago(60),
        count: 3,
      },
    ];
    const text = renderTransactionDetail(committed, recentEvents(events, 10), NOW);
    expect(text.indexOf('LockWait')).toBeLessThan(text.indexOf('done'));
    expect(text).toContain('held by shop/other (x3)');
    expect(recentEvents(events, 1).map((e) => e.reason)).toEqual(['Committed']);
  });

  it('ends with what to do next', () => {
    expect(renderTransactionDetail(failed, [], NOW)).toContain('janus recover deploy-v2 -n shop');
    expect(nextStepHint(committed)).toContain('janus rollback deploy-v2 -n shop');
    const unfinished = txn({ phase: 'Failed', items: [item(0, { committed: true, error: 'Forbidden' })] });
    expect(nextStepHint(unfinished)).toContain('Retry it: janus rollback deploy-v2 -n shop');
    expect(nextStepHint(txn({ phase: 'Failed', items: [item(0, { error: 'invalid' })] }))).toBeUndefined();
    expect(nextStepHint(txn({ phase: 'Committing' }))).toBeUndefined();
  });
});

describe('the bake window counting down', () => {
  const baking = (): Parameters<typeof transactionRow>[0] => {
    const t = txn({
      phase: 'Verifying',
      items: [0, 1, 2].map((i) => item(i, { committed: true })),
      conditions: [{ type: 'Ready', status: 'False', reason: 'Baking', message: 'stable for 10s of 30s' }],
    });
    const health = {
      check: 'Commit' as const,
      startedAt: ago(20),
      deadline: ago(-600),
      stableSince: ago(12),
    };
    return { ...t, spec: { ...t.spec, health: { stableFor: '30s' } }, status: { ...t.status, health } };
  };

  it('the table shows the live countdown next to the reason', () => {
    expect(transactionRow(baking(), NOW)[5]).toBe('Baking (stable for 12s of 30s)');
  });

  it('the detail says how long it has been stable, of how long, and since when', () => {
    expect(renderTransactionDetail(baking(), [], NOW)).toContain(
      `Health check:   Commit: baking, stable for 12s of 30s (since ${ago(12)} (12s ago)); a regression rolls back`,
    );
  });

  it('once the check is over, no countdown', () => {
    const t = baking();
    const done = { ...t, status: { ...t.status, health: { ...t.status?.health, completedAt: ago(0) } } };
    expect(transactionRow(done, NOW)[5]).toBe('Baking');
  });
});

describe('the analysis of the bake window', () => {
  const analysed = (): Parameters<typeof renderTransactionDetail>[0] => {
    const t = txn({ phase: 'Verifying', items: [item(0, { committed: true })] });
    const health = {
      check: 'Commit' as const,
      startedAt: ago(40),
      stableSince: ago(30),
      analysis: [
        {
          name: 'error-rate',
          measured: 3,
          failed: 1,
          measurements: [
            { phase: 'Passed' as const, at: ago(20), value: 0.01, message: 'error-rate: 0.01' },
            { phase: 'Failed' as const, at: ago(10), value: 0.31, message: 'error-rate: 0.31 > 0.05' },
          ],
          nextAt: ago(-8),
        },
        { name: 'smoke', measured: 0, failed: 0 },
      ],
    };
    return { ...t, status: { ...t.status, health } };
  };

  it('shows each check: how often measured and failed, the last measurement and why, and when it measures next', () => {
    const out = renderTransactionDetail(analysed(), [], NOW);
    expect(out).toContain('Analysis (Commit):');
    expect(out).toMatch(/error-rate\s+3\s+1\s+Failed 0\.31 \(10s ago\): error-rate: 0\.31 > 0\.05\s+in 8s/);
    expect(out).toMatch(/smoke\s+0\s+0\s*\n/);
  });

  it('shows nothing of analysis for a transaction without it', () => {
    expect(renderTransactionDetail(committed, [], NOW)).not.toContain('Analysis');
  });
});

describe("a source's transaction", () => {
  const commit = '3f2a9c1'.padEnd(40, '0');
  const fromSource = (revision: string | undefined) => {
    const t = committed;
    return {
      ...t,
      spec: { ...t.spec, sourceRef: { name: 'web' } },
      status: {
        ...t.status,
        source: {
          repository: 'https://git.example/shop.git',
          path: 'sources/web.yaml',
          ...(revision && { revision }),
        },
      },
    };
  };

  it('says which Source and which commit of it it applies', () => {
    const text = renderTransactionDetail(fromSource(`main@sha1:${commit}`), [], NOW);
    expect(text).toMatch(
      /Source:\s+https:\/\/git\.example\/shop\.git sources\/web\.yaml at main@sha1:3f2a9c1/,
    );
    expect(text).toMatch(/Applies:\s+commit 3f2a9c1 of Source shop\/web \(kubectl get source -n shop web\)/);
  });

  it('says a drift correction of the Source, and whose render it puts back', () => {
    const correction = {
      ...fromSource(`main@sha1:${commit}`),
      metadata: { ...committed.metadata, name: 'web-drift-42' },
    };
    expect(renderTransactionDetail(correction, [], NOW)).toMatch(
      /Applies:\s+a drift correction of Source shop\/web \(the render of commit 3f2a9c1\) \(kubectl get source -n shop web\)/,
    );
    // The commits of a source named web-drift are no corrections of it.
    const named = { ...correction, spec: { ...correction.spec, sourceRef: { name: 'web-drift' } } };
    expect(
      renderTransactionDetail(
        { ...named, metadata: { ...named.metadata, name: 'web-drift-3f2a9c1' } },
        [],
        NOW,
      ),
    ).toMatch(/Applies:\s+commit 3f2a9c1 of Source shop\/web-drift/);
  });

  it('says a commit of the Source when its revision is not known', () => {
    expect(renderTransactionDetail(fromSource(undefined), [], NOW)).toMatch(
      /Applies:\s+a commit of Source shop\/web/,
    );
  });
});
