/**
 * Watches and requests use separate socket pools (issue 21, finding 3): with every socket for
 * watch streams held by a watch that never ends, a request (a lease renewal, a status write) is
 * still answered at once. Before, both shared 64 sockets and the request waited for a watch to
 * end. And no request waits for a socket without end: past SOCKET_WAIT_MS it fails, saying why.
 */
import { expect, it } from 'vitest';
import { REQUEST_SOCKETS, SOCKET_WAIT_MS, STREAM_SOCKETS } from '../../../src/kube/connection.ts';
import { useLocalServer } from './local-server.ts';

const clientOf = useLocalServer();

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/janus-system/leases/janus-controller';

it('answers a request while every watch socket is held by a watch', async () => {
  let watching = 0;
  const client = await clientOf((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      watching++;
      res.flushHeaders(); // a watch: the stream starts and never ends
      return;
    }
    res.end(JSON.stringify({ metadata: { name: 'lease' } }));
  });
  const stop = new AbortController();
  try {
    const watches = Array.from({ length: STREAM_SOCKETS }, (_, i) =>
      client.watch(`/api/v1/namespaces/ns-${i}/pods`, {}, stop.signal),
    );
    const pending = watches.map((w) => w.next());
    await expect.poll(() => watching, { timeout: 10_000 }).toBe(STREAM_SOCKETS);

    const lease = await client.request<{ metadata: { name: string } }>({ method: 'GET', path: LEASE });
    expect(lease.metadata.name).toBe('lease');

    stop.abort();
    await Promise.allSettled(pending);
  } finally {
    stop.abort();
    await client.connection.close();
  }
});

it(
  'fails a request that finds no free socket within SOCKET_WAIT_MS, and says so',
  async () => {
    let held = 0;
    const client = await clientOf(() => {
      held++; // never answered: each holds its socket
    });
    const stop = new AbortController();
    try {
      const hung = Array.from({ length: REQUEST_SOCKETS }, () =>
        client.request({ method: 'GET', path: '/api/v1/namespaces', signal: stop.signal }),
      );
      await expect.poll(() => held, { timeout: 10_000 }).toBe(REQUEST_SOCKETS);

      const started = performance.now();
      await expect(client.request({ method: 'PUT', path: LEASE, body: {} })).rejects.toThrow(
        `no free connection for PUT ${LEASE} within ${SOCKET_WAIT_MS / 1000} s: all ${REQUEST_SOCKETS} for requests are busy`,
      );
      expect(performance.now() - started).toBeGreaterThanOrEqual(SOCKET_WAIT_MS - 100);

      stop.abort();
      await Promise.allSettled(hung);
    } finally {
      stop.abort();
      await client.connection.close();
    }
  },
  SOCKET_WAIT_MS + 30_000,
);
