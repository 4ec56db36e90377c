/**
 * A gateway in front of the tests' Prometheus that wants a bearer token, as an OAuth or
 * kube-rbac-proxy in front of a real one does (Prometheus's own web config knows basic auth
 * only). It forwards GETs that carry the token, with the upstream's basic auth; else 401.
 */
import { createServer, type Server } from 'node:http';

export interface BearerProxy {
  /** http://127.0.0.1:<port> */
  readonly address: string;
  stop(): Promise<void>;
}

export async function startBearerProxy(
  upstream: string,
  token: string,
  upstreamAuthorization: string,
): Promise<BearerProxy> {
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized\n');
      return;
    }
    fetch(new URL(req.url ?? '/', upstream), { headers: { authorization: upstreamAuthorization } })
      .then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      })
      .catch((e: unknown) => res.writeHead(502).end(String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('bearer proxy: no port');
  return {
    address: `http://127.0.0.1:${address.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
