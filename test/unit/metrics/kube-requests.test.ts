import { afterEach, describe, expect, it } from 'vitest';
import { Connection } from '../../../src/kube/connection.ts';
import { KubeConfig } from '../../../src/kube/kubeconfig.ts';
import { Metrics, NO_RESPONSE_CODE } from '../../../src/metrics/index.ts';
import { histogramOf, samplesOf, sampleValue, scrape } from './query.ts';

/** A real Connection; nothing listens at its address, and no request is sent. */
async function connection(): Promise<Connection> {
  const kc = new KubeConfig(
    [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    [{ name: 'u', token: 'not-a-real-token' }],
    [{ name: 'ctx', cluster: 'c', user: 'u' }],
    'ctx',
    'test',
  );
  return Connection.fromKubeConfig(kc);
}

const opened: Connection[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

describe('observeKubeRequests', () => {
  it('counts every request reported by the connection, by method and code', async () => {
    const conn = await connection();
    opened.push(conn);
    const metrics = new Metrics();
    metrics.observeKubeRequests(conn);
    const request = { path: '/apis/tx.janus.io/v1alpha1/namespaces/team-a/transactions/t1', seconds: 0.03 };

    conn.recordRequest({ ...request, method: 'PATCH', status: 200, impersonating: 'alice' });
    conn.recordRequest({ ...request, method: 'PATCH', status: 409, impersonating: undefined });
    conn.recordRequest({ ...request, method: 'get', status: 0, impersonating: undefined });

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, 'janus_kube_requests_total', { method: 'PATCH', code: '200' })).toBe(1);
    expect(sampleValue(exposition, 'janus_kube_requests_total', { method: 'PATCH', code: '409' })).toBe(1);
    expect(
      sampleValue(exposition, 'janus_kube_requests_total', { method: 'GET', code: NO_RESPONSE_CODE }),
    ).toBe(1);
    const patches = histogramOf(exposition, 'janus_kube_request_duration_seconds', { method: 'PATCH' });
    expect([patches.count, patches.sum]).toEqual([2, 0.06]);
  });

  it('never puts the request path in a label', async () => {
    const conn = await connection();
    opened.push(conn);
    const metrics = new Metrics();
    metrics.observeKubeRequests(conn);

    conn.recordRequest({
      method: 'GET',
      path: '/api/v1/secret-name',
      status: 200,
      seconds: 1,
      impersonating: 'bob',
    });

    const text = await metrics.text();
    expect(text).not.toContain('secret-name');
    expect(text).not.toContain('bob');
  });

  it('stops counting once unsubscribed', async () => {
    const conn = await connection();
    opened.push(conn);
    const metrics = new Metrics();
    const stop = metrics.observeKubeRequests(conn);
    const record = { method: 'GET', path: '/api', status: 200, seconds: 0.01, impersonating: undefined };

    conn.recordRequest(record);
    stop();
    conn.recordRequest(record);

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, 'janus_kube_requests_total', { method: 'GET', code: '200' })).toBe(1);
    expect(samplesOf(exposition, 'janus_kube_requests_total')).toHaveLength(1);
  });
});
