/**
 * An HTTP listener that records every request it gets (path, headers, body, and the status it
 * answered) and answers 200, or the status set with `answer`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

export interface TestListener {
  /** http://127.0.0.1:<port> */
  readonly address: string;
  readonly received: ReceivedRequest[];
  /** The requests made to `path`. */
  at(path: string): ReceivedRequest[];
  /** Answers every later request with `status`. */
  answer(status: number): void;
  close(): Promise<void>;
}

export async function startListener(): Promise<TestListener> {
  const received: ReceivedRequest[] = [];
  let status = 200;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ path: req.url ?? '', headers: req.headers, body, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${port}`,
    received,
    at: (path) => received.filter((r) => r.path === path),
    answer: (next) => {
      status = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
