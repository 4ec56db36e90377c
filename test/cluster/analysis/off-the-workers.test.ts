/**
 * Metric measurements do not hold the controller's reconcile workers (issue 21: what one
 * namespace does may cost that namespace, never the others). A controller process with ONE
 * worker: namespace A's analysed Transaction measures against an HTTP listener that holds the
 * request open until the test releases it, and meanwhile namespace B's ordinary Transaction
 * reaches Committed, asserted while A's request is still held open. Then the listener answers,
 * and A commits on that measurement. And a transaction cancelled in its window has its
 * measurement in flight aborted (the listener sees the request closed, unanswered).
 *
 * No durations are assumed: the test orders observable events (the request arrives, B commits,
 * the request is still open). Before, the reconcile of A awaited the measurement, so B could be
 * reconciled only once the request had ended (the client gave up after its 10 s timeout): the
 * held request was always closed by the time B committed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANNOTATION_CANCEL } from '../../../src/api/v1alpha1/index.ts';
import { freshInstance } from '../../support/cluster/instance.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  getTxn,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

/** An HTTP listener that holds every request open until released; after that it answers 200 at once. */
interface HeldListener {
  readonly url: string;
  /** Requests received, in order; `closed` once the client went away or it was answered. */
  readonly requests: { closed: boolean; answered: boolean }[];
  release(): void;
  stop(): Promise<void>;
}

async function heldListener(): Promise<HeldListener> {
  const held: { res: ServerResponse; seen: { closed: boolean; answered: boolean } }[] = [];
  const requests: { closed: boolean; answered: boolean }[] = [];
  let released = false;
  const answer = (res: ServerResponse, seen: { answered: boolean }) => {
    seen.answered = true;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  };
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    const seen = { closed: false, answered: false };
    requests.push(seen);
    res.on('close', () => {
      seen.closed = true;
    });
    if (released) answer(res, seen);
    else held.push({ res, seen });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/healthz`,
    requests,
    release() {
      released = true;
      for (const { res, seen } of held.splice(0)) if (!seen.closed) answer(res, seen);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let listener: HeldListener;

beforeEach(async () => {
  listener = await heldListener();
});

afterEach(async () => {
  listener?.release();
  await listener?.stop();
});

/** This test's own installation: the controller handles only Transactions labelled with it. */
const instance = freshInstance();

/**
 * A controller of `workers` workers for every namespace (B's too), handling this test's
 * Transactions only. The measurement's own timeout is long, so a request stays open until
 * released (or aborted).
 */
const controllerOptions = (workers: number) => ({
  kubeconfig: clients.kubeconfigs.controller,
  logLevel: 'info',
  instance,
  extraArgs: ['--no-leader-elect', '--concurrency', String(workers)],
  env: {
    JANUS_ANALYSIS_TIMEOUT: '10m',
    // The listener is the one address the checks may query, as a platform team would allow it.
    JANUS_ANALYSIS_ALLOWED_ADDRESSES: new URL(listener.url).origin,
  },
});

/** A ConfigMap transaction in `ns` whose 1s bake window has one check: the held listener's URL. */
const analysed = (ns: string) =>
  transaction(ns, 'analysed', createConfigMap('analysed'), {
    instance,
    health: {
      targets: 'All', // the ConfigMap is gated, so the window opens at once
      stableFor: '1s',
      analysis: [{ check: { name: 'held', interval: '1s', http: { url: listener.url } } }],
    },
  });

const createConfigMap = (name: string) => [
  { target: cmTarget(name), type: 'Create' as const, content: { data: { a: '1' } } },
];

describe('metric measurements run off the reconcile workers', () => {
  it("commits namespace B's transaction while namespace A's measurement is held open, with one worker; A then commits on it", async () => {
    const nsA = await testNamespace(clients.admin, 'held-a', { deployer: [ALL_ON_CONFIGMAPS] });
    const nsB = await testNamespace(clients.admin, 'held-b', { deployer: [ALL_ON_CONFIGMAPS] });
    await withController(controllerOptions(1), async () => {
      await clients.admin.create(analysed(nsA));
      // A's first measurement has reached the listener, which holds it.
      await eventually(() => expect(listener.requests.length).toBeGreaterThanOrEqual(1), {
        timeoutMs: 120_000,
      });
      const first = listener.requests[0];

      await clients.admin.create(transaction(nsB, 'ordinary', createConfigMap('ordinary'), { instance }));
      await waitForPhase(clients.admin, nsB, 'ordinary', 'Committed', 120_000);
      // B committed while A's request was still held open: no worker waited on it.
      expect(first?.closed, "A's first request was closed before B committed").toBe(false);
      expect(first?.answered).toBe(false);
      const waiting = await getTxn(clients.admin, nsA, 'analysed');
      expect(waiting.status?.phase).toBe('Verifying');
      expect(waiting.status?.health?.analysis?.[0]?.measured ?? 0).toBe(0);

      listener.release();
      const committed = await waitForPhase(clients.admin, nsA, 'analysed', 'Committed', 120_000);
      expect(first?.answered).toBe(true);
      expect(committed.status?.health?.result).toBe('Healthy');
      const state = committed.status?.health?.analysis?.[0];
      expect(state).toMatchObject({ name: 'held', failed: 0 });
      expect(state?.measurements?.at(-1)).toMatchObject({ phase: 'Passed', value: 200 });
    });
  });

  it('aborts the measurement in flight of a transaction cancelled in its window', async () => {
    const ns = await testNamespace(clients.admin, 'held-cancel', { deployer: [ALL_ON_CONFIGMAPS] });
    await withController(controllerOptions(2), async () => {
      await clients.admin.create(analysed(ns));
      await eventually(() => expect(listener.requests.length).toBeGreaterThanOrEqual(1), {
        timeoutMs: 120_000,
      });
      await annotate(clients.admin, ns, 'analysed', { [ANNOTATION_CANCEL]: 'not this one' });
      await waitForPhase(clients.admin, ns, 'analysed', 'RolledBack', 120_000);
      // Out of its window, its measurement was aborted (the request's own timeout is 10m).
      await eventually(() => expect(listener.requests.every((r) => r.closed && !r.answered)).toBe(true));
    });
  });
});
