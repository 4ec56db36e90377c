/**
 * The results reporter at the start of a term, on the process's Transaction cache: listed
 * already when a standby takes over (the cache lives for the process), so its handlers hear of
 * every Transaction the moment they register. Outcomes the results branch records are neither
 * read in full nor written again; one it lacks is read in full (the compact form is not the
 * record) and written once. On an in-memory list and watch; no API server, no Git.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { cachedForm } from '../../../src/controller/transaction-cache.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/index.ts';
import { renderTransactionResult } from '../../../src/results/render-transaction.ts';
import { ResultsReporter } from '../../../src/results/reporter.ts';
import type { ResultRecord } from '../../../src/results/result-record.ts';
import { Informer, type ListWatchClient } from '../../../src/runtime/informer.ts';
import { withPhase } from '../../../src/saga/status.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const REPOSITORY = 'https://git.example.com/platform/deploys.git';
const CONTEXT = { controllerVersion: '0.1.0', identity: 'janus' };

function committed(name: string): Transaction {
  const status = withPhase(
    {
      items: [{ target: `v1 ConfigMap shop/${name}`, prepared: true, committed: true }],
      startedAt: '2026-03-01T10:00:00Z',
    },
    'Committed',
    { reason: 'Committed', message: '1/1 changes committed' },
    new Date('2026-03-01T10:00:02Z'),
    1,
  );
  return aTransaction({
    name,
    uid: `uid-${name}`,
    resourceVersion: '5',
    annotations: sourceAnnotations({
      repository: REPOSITORY,
      revision: `main@sha1:${'a'.repeat(40)}`,
      path: `transactions/${name}`,
    }),
    changes: [
      { target: { apiVersion: 'v1', kind: 'ConfigMap', name }, type: 'Patch', content: { data: { v: '2' } } },
    ],
    status,
  });
}

/** The API as the reporter and the cache use it: the LIST, an idle watch, and GETs counted. */
function memoryApi(transactions: Transaction[]) {
  const reads: string[] = [];
  const client = {
    async request(o: { path: string }) {
      const name = /\/transactions\/([^/?]+)$/.exec(o.path)?.[1];
      if (!name) return { items: transactions, metadata: { resourceVersion: '10' } };
      reads.push(name);
      return transactions.find((t) => t.metadata.name === name);
    },
    async *watch(_path: string, _query: unknown, signal: AbortSignal) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      yield* [];
    },
  };
  return { client, reads };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function settle(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !done(); i++) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r)); // and whatever follows
}

describe('the results reporter starting on a listed Transaction cache', () => {
  it('reads in full and writes only the outcome the results branch lacks', async () => {
    const recordedOne = committed('recorded');
    const missing = committed('missing');
    const { client, reads } = memoryApi([recordedOne, missing]);
    const cache = new Informer<Transaction>({
      client: client as unknown as ListWatchClient,
      path: '/apis/tx.janus.io/v1alpha1/namespaces/shop/transactions',
      transform: cachedForm,
      resyncPeriodMs: 0,
    });
    cache.start();
    stops.push(() => cache.stop());
    await cache.waitForSync();

    const written: ResultRecord[] = [];
    let branchRead = false;
    const reporter = new ResultsReporter({
      client: client as unknown as KubeClient,
      cache,
      repository: REPOSITORY,
      writer: {
        write: async (record) => void written.push(record),
        flush: async () => ({ records: 0, tip: undefined, replays: 0 }),
        pending: 0,
      },
      readRecorded: async () => {
        branchRead = true;
        const text = Object.values(renderTransactionResult(recordedOne, CONTEXT).files)[0] ?? '';
        return new Map([['shop/recorded', text]]);
      },
      context: CONTEXT,
      log: silentLogger(),
    });
    reporter.start();
    stops.push(() => reporter.stop());
    await settle(() => branchRead && written.length > 0);

    expect(reads).toEqual(['missing']);
    expect(written).toEqual([renderTransactionResult(missing, CONTEXT)]);
  });
});
