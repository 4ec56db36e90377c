/**
 * Plain requests to the local control plane's processes while they start (etcd's /health, the
 * API server's /readyz, the simulated Nodes): before any kubeconfig exists, with the API server's
 * own certificate as the only trusted CA. Node's http/https, as src/kube does (undici is not a
 * runtime dependency).
 */
import { http, https } from '../../node-builtins.ts';

export interface LoopbackRequest {
  method?: 'GET' | 'POST';
  /** PEM of the CA to trust (https only). */
  ca?: string;
  /** Bearer token. */
  token?: string;
  /** Sent as JSON. */
  body?: unknown;
}

export interface LoopbackResponse {
  status: number;
  text: string;
}

export function loopbackRequest(url: string, opts: LoopbackRequest = {}): Promise<LoopbackResponse> {
  const target = new URL(url);
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const send = target.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: opts.method ?? 'GET',
        headers,
        ...(opts.ca !== undefined && { ca: opts.ca }),
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}
