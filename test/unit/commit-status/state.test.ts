import { describe, expect, it } from 'vitest';
import type { Phase, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { commitStatusListener, rejectionStatusOf } from '../../../src/commit-status/listener.ts';
import {
  DESCRIPTION_MAX,
  fillTemplate,
  oneLine,
  statusOfTransaction,
} from '../../../src/commit-status/state.ts';
import { renderRejection } from '../../../src/results/render-directory.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const SHA = 'c'.repeat(40);

function transaction(status: Transaction['status'], annotations = true): Transaction {
  return aTransaction({
    namespace: 'shop',
    name: 'add-cache',
    ...(annotations && {
      annotations: sourceAnnotations({
        repository: 'https://gitea.example.com/platform/deploys.git',
        revision: `main@sha1:${SHA}`,
        path: 'transactions/add-cache',
      }),
    }),
    changes: [
      { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' }, type: 'Patch', content: {} },
      { target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, type: 'Update', content: {} },
    ],
    ...(status && { status }),
  });
}

const condition = (type: string, reason: string, message: string) => ({
  type,
  status: 'True' as const,
  reason,
  message,
  lastTransitionTime: '2026-03-01T10:00:04Z',
});

describe('the commit status of a Transaction', () => {
  it('is pending while it runs, naming the phase and nothing that changes within one', () => {
    const running: Phase[] = ['Pending', 'Preparing', 'Committing', 'Verifying', 'RollingBack'];
    const seen = running.map((phase) => {
      const first = statusOfTransaction(
        transaction({
          phase,
          conditions: [condition('Reconciling', 'LockWait', 'waiting for a lock held by x')],
        }),
      );
      const later = statusOfTransaction(
        transaction({
          phase,
          conditions: [condition('Reconciling', 'LockWait', 'waiting for a lock held by y')],
        }),
      );
      expect(first?.state).toBe('pending');
      expect(first?.description.startsWith(`${phase}: `)).toBe(true);
      // A message that moves within a phase does not make a second status.
      expect(later).toEqual(first);
      return first?.description;
    });
    expect(new Set(seen).size).toBe(running.length);
    expect(statusOfTransaction(transaction(undefined))?.description).toBe(
      'Pending: materialized, waiting to start',
    );
  });

  it('is success at Committed and failure at RolledBack and Failed, with the reason', () => {
    const committed = statusOfTransaction(
      transaction({
        phase: 'Committed',
        conditions: [condition('Ready', 'Committed', 'all 2 changes committed')],
      }),
    );
    expect(committed).toEqual({
      sha: SHA,
      context: 'janus/shop/add-cache',
      state: 'success',
      description: 'Committed: all 2 changes committed',
      phase: 'Committed',
    });
    const rolledBack = statusOfTransaction(
      transaction({
        phase: 'RolledBack',
        conditions: [
          condition('RolledBack', 'HealthCheckFailed', 'Deployment shop/web:\n  ProgressDeadlineExceeded'),
        ],
      }),
    );
    expect(rolledBack?.state).toBe('failure');
    expect(rolledBack?.description).toBe('RolledBack: Deployment shop/web: ProgressDeadlineExceeded');
    const failed = statusOfTransaction(
      transaction({
        phase: 'Failed',
        conditions: [condition('Stalled', 'Conflict', 'someone else changed web')],
      }),
    );
    expect(failed?.state).toBe('failure');
    expect(failed?.description).toBe('Failed: someone else changed web');
  });

  it('is none for a Transaction with no source commit (not from Git)', () => {
    expect(statusOfTransaction(transaction({ phase: 'Committed' }, false))).toBeUndefined();
  });

  it('links to the URL template, filled and encoded', () => {
    const status = statusOfTransaction(transaction({ phase: 'Committed' }), {
      targetUrl: 'https://janus.example.com/{namespace}/{name}?sha={sha}&phase={phase}#{path}',
    });
    expect(status?.targetUrl).toBe(
      `https://janus.example.com/shop/add-cache?sha=${SHA}&phase=Committed#transactions/add-cache`,
    );
    expect(fillTemplate('{name}', { namespace: 'a', name: 'x y/z', sha: '', phase: '' })).toBe('x%20y%2Fz');
  });
});

describe('oneLine', () => {
  it("keeps a description in one line within GitHub's 140 characters", () => {
    expect(oneLine('a\n\tb  c\r\n', DESCRIPTION_MAX)).toBe('a b c');
    const long = oneLine('é'.repeat(300), DESCRIPTION_MAX);
    expect(Array.from(long)).toHaveLength(DESCRIPTION_MAX);
    expect(long.endsWith('…')).toBe(true);
    // A character outside the BMP is never cut in half.
    expect(oneLine('😀'.repeat(200), 10)).toBe(`${'😀'.repeat(9)}…`);
  });
});

describe('the commit status of a rejected directory', () => {
  it('is failure, naming the first problem by file and line', () => {
    const record = renderRejection(
      {
        namespace: 'shop',
        name: 'bad-yaml',
        source: {
          repository: 'https://gitea.example.com/platform/deploys.git',
          revision: `main@sha1:${SHA}`,
          path: 'transactions/bad-yaml',
        },
      },
      [
        {
          file: 'transactions/bad-yaml/01-cm.yaml',
          line: 3,
          column: 5,
          code: 'yaml-syntax',
          message: 'bad indentation',
        },
        { file: 'transactions/bad-yaml/02-cm.yaml', line: 1, code: 'yaml-syntax', message: 'unexpected end' },
      ],
      { controllerVersion: '0', identity: 'janus' },
    );
    const rejection = rejectionStatusOf(record, {});
    expect(rejection?.key).toBe(`shop/bad-yaml@${SHA}`);
    expect(rejection?.status).toEqual({
      sha: SHA,
      context: 'janus/shop/bad-yaml',
      state: 'failure',
      description:
        'Rejected (2 problems), nothing applied: transactions/bad-yaml/01-cm.yaml:3: bad indentation',
      phase: 'Rejected',
    });
  });
});

describe('the listener on the transaction stream', () => {
  it('offers the status of every Transaction as it moves, but not of one finished over a day ago', () => {
    const offered: string[] = [];
    const now = Date.parse('2026-03-02T10:00:00Z');
    const listener = commitStatusListener(
      { offer: (key, status) => offered.push(`${key} ${status?.state}`), forget: () => {} },
      {},
      () => now,
    );
    listener.observe(transaction({ phase: 'Preparing' }), 'shop/add-cache');
    listener.observe(
      transaction({ phase: 'Committed', completedAt: '2026-03-02T09:00:00Z' }),
      'shop/add-cache',
    );
    listener.observe(transaction({ phase: 'Committed', completedAt: '2026-03-01T09:59:59Z' }), 'shop/old');
    expect(offered).toEqual(['shop/add-cache pending', 'shop/add-cache success']);
  });
});
