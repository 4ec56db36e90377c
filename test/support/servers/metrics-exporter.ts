/**
 * A small Prometheus exporter the tests control: counters a test makes climb, served in the text
 * exposition format on a free loopback port, for the real Prometheus (prometheus.ts) to scrape.
 * `http_requests_total{release="a",code="500"}` and its siblings give a test an error ratio to
 * steer; a release label of its own keeps each test's series apart.
 */
import { createServer, type Server } from 'node:http';

export interface MetricsExporter {
  /** host:port, as a scrape target. */
  readonly target: string;
  /** Adds `n` to http_requests_total with these labels. */
  count(labels: Readonly<Record<string, string>>, n: number): void;
  /** The number of scrapes served so far (a test waits for the next one to know Prometheus saw a change). */
  readonly scrapes: number;
  stop(): Promise<void>;
}

export async function startMetricsExporter(): Promise<MetricsExporter> {
  const requests = new Map<string, number>();
  let scrapes = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    scrapes++;
    const lines = [
      '# HELP http_requests_total Requests the test says the release served.',
      '# TYPE http_requests_total counter',
      ...[...requests].map(([labels, n]) => `http_requests_total{${labels}} ${n}`),
      '',
    ];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(lines.join('\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('metrics exporter: no port');
  return {
    target: `127.0.0.1:${address.port}`,
    count: (labels, n) => {
      const key = Object.entries(labels)
        .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
        .join(',');
      requests.set(key, (requests.get(key) ?? 0) + n);
    },
    get scrapes() {
      return scrapes;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
