/**
 * A plain-HTTP reverse proxy on 127.0.0.1 in front of the kube-apiserver that counts every
 * request passing through it: API cost is measured at the HTTP layer, below any client library,
 * for Janus and for kubectl alike. Streams both ways, so watches work through it. It can also
 * hold each request for a while, to stand for the network between a controller and a remote API
 * server, or hold chosen requests, to stand for a slow admission webhook or a slow API server.
 * Used by the benchmarks and by tests that need a slow or counted API server.
 */

import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { kubeconfigYaml } from '../../../src/cli/demo/control-plane.ts';

/** Per-connection headers: each side of the proxy sets its own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/** The headers one hop forwards: without the per-connection ones (and any in `drop`). */
function endToEnd(
  headers: Record<string, string | string[] | undefined>,
  drop: string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k) && !drop.includes(k))
      out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export interface CountedRequest {
  method: string;
  path: string;
  watch: boolean;
}

export interface CountingProxy {
  readonly url: string;
  readonly requests: CountedRequest[];
  reset(): void;
  /** Holds every request (watches excepted) this long before forwarding it: an added round trip. */
  setRoundTripMs(ms: number): void;
  /** Holds the requests `hold` gives a duration for (method, path and query), that long. */
  setHold(hold: ((method: string, url: URL) => number) | undefined): void;
  close(): Promise<void>;
}

/**
 * `anonymousToken` is attached to requests that carry no credentials: kubectl (client-go) never
 * sends a bearer token over plain HTTP, so through this loopback proxy it would be anonymous.
 */
export async function startCountingProxy(
  upstream: string,
  caPem: string,
  anonymousToken?: string,
): Promise<CountingProxy> {
  // HTTP/1.1 upstream, as Janus and kubectl speak it. (undici 8's HTTP/2 client also failed about
  // one response in 5,000 with a content-length mismatch, which stalled a drain for seconds.)
  const agent = new Agent({ connect: { ca: caPem }, connections: 128, allowH2: false });
  const requests: CountedRequest[] = [];
  let roundTripMs = 0;
  let hold: ((method: string, url: URL) => number) | undefined;
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const watch = url.searchParams.get('watch') === 'true';
    requests.push({ method: req.method ?? 'GET', path: url.pathname, watch });
    if (roundTripMs > 0 && !watch) await sleep(roundTripMs);
    const held = hold?.(req.method ?? 'GET', url) ?? 0;
    if (held > 0) await sleep(held);
    // A client that goes away (the watches of a stopped controller) ends its upstream request
    // too; otherwise that watch lingers until the API server times it out, and close() waits.
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    try {
      const headers = endToEnd(req.headers, ['host']);
      if (!headers.authorization && anonymousToken) headers.authorization = `Bearer ${anonymousToken}`;
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const upstreamRes = await request(`${upstream}${req.url}`, {
        method: (req.method ?? 'GET') as 'GET',
        headers,
        body: hasBody ? req : null,
        dispatcher: agent,
        signal: gone.signal,
        bodyTimeout: 0,
        headersTimeout: 60_000,
      });
      res.writeHead(upstreamRes.statusCode, endToEnd(upstreamRes.headers));
      for await (const chunk of upstreamRes.body) res.write(chunk);
      res.end();
    } catch (e) {
      // Once the headers are out, only a reset tells the client its body is incomplete: a short
      // body would leave it waiting for the rest until the connection times out.
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reset: () => {
      requests.length = 0;
    },
    setRoundTripMs: (ms) => {
      roundTripMs = ms;
    },
    setHold: (fn) => {
      hold = fn;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await agent.close();
    },
  };
}

/** A proxy in front of the API server of this admin kubeconfig, and kubeconfigs that go through it. */
export interface ApiProxy extends CountingProxy {
  /** Writes `<kubeconfig>.proxied`: the same identity (its token), through the proxy. */
  proxied(kubeconfig: string, user: string): Promise<string>;
}

export async function startApiProxy(adminKubeconfig: string): Promise<ApiProxy> {
  const adminConfig = await readFile(adminKubeconfig, 'utf8');
  const server = /server: (\S+)/.exec(adminConfig)?.[1] ?? '';
  const ca = Buffer.from(
    /certificate-authority-data: (\S+)/.exec(adminConfig)?.[1] ?? '',
    'base64',
  ).toString();
  const proxy = await startCountingProxy(server, ca, tokenIn(adminConfig));
  return {
    ...proxy,
    get url() {
      return proxy.url;
    },
    async proxied(kubeconfig, user) {
      const path = `${kubeconfig}.proxied`;
      await writeFile(path, kubeconfigYaml(proxy.url, '', user, tokenIn(await readFile(kubeconfig, 'utf8'))));
      return path;
    },
  };
}

const tokenIn = (kubeconfig: string) => /token: (\S+)/.exec(kubeconfig)?.[1] ?? '';
