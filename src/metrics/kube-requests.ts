import type { RequestRecord } from '../kube/connection.ts';
import { KUBE_REQUEST_BUCKETS } from './buckets.ts';
import { Counter, Histogram, type Registry } from './prom.ts';

/** Anything that reports Kubernetes API requests: a kube Connection. */
export interface RequestSource {
  observe(observer: (record: RequestRecord) => void): () => void;
}

/** client-go's label value for a request that got no HTTP answer (connection refused, timeout). */
export const NO_RESPONSE_CODE = '<error>';

/** Kubernetes API requests, as client-go's rest_client_* metrics count them. */
export function kubeRequestInstruments(registry: Registry) {
  const registers = [registry];
  return {
    requests: new Counter({
      name: 'janus_kube_requests_total',
      help: 'Requests to the Kubernetes API server, by HTTP method and status code.',
      labelNames: ['method', 'code'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'janus_kube_request_duration_seconds',
      help: 'Latency of requests to the Kubernetes API server, by HTTP method (WATCH: until the headers).',
      labelNames: ['method'] as const,
      buckets: KUBE_REQUEST_BUCKETS,
      registers,
    }),
  };
}

export type KubeRequestInstruments = ReturnType<typeof kubeRequestInstruments>;

export function recordKubeRequest(instruments: KubeRequestInstruments, record: RequestRecord): void {
  // The path is deliberately not a label: it holds namespaces and object names (cardinality).
  const method = record.method.toUpperCase();
  const code = record.status > 0 ? String(record.status) : NO_RESPONSE_CODE;
  instruments.requests.inc({ method, code });
  instruments.duration.observe({ method }, record.seconds);
}
