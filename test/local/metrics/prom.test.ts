import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectDefaultMetrics, Registry } from '../../../src/metrics/prom.ts';

const names = async (registry: promClient.Registry) =>
  (await registry.getMetricsAsJSON()).map((m) => m.name).sort();

describe('prom-client, loaded file by file', () => {
  it('registers the same default metrics as prom-client itself', async () => {
    const ours = new Registry();
    collectDefaultMetrics(ours, 'janus_');
    const theirs = new promClient.Registry();
    promClient.collectDefaultMetrics({ register: theirs, prefix: 'janus_' });

    expect(await names(ours)).toEqual(await names(theirs));
  });

  it('counts the process CPU time', async () => {
    const registry = new Registry();
    collectDefaultMetrics(registry, 'x_');
    const spin = Date.now() + 20;
    while (Date.now() < spin) {}
    const scraped = await registry.getMetricsAsJSON();
    const value = (name: string) => scraped.find((m) => m.name === name)?.values[0]?.value;
    const cpu = value('x_process_cpu_seconds_total');
    const user = value('x_process_cpu_user_seconds_total');

    expect(cpu).toBeGreaterThan(0);
    expect(user).toBeGreaterThan(0);
    expect(cpu).toBeGreaterThanOrEqual(user ?? Number.POSITIVE_INFINITY);
  });

  it("keeps prom-client's index, the Pushgateway and OpenTelemetry out of the process", () => {
    const metrics = fileURLToPath(new URL('../../../src/metrics/index.ts', import.meta.url));
    const script = `
      import { createRequire } from 'node:module';
      const { Metrics } = await import(${JSON.stringify(metrics)});
      await new Metrics({ defaultMetrics: true }).text();
      console.log(Object.keys(createRequire(import.meta.url).cache).join('\\n'));`;
    const loaded = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });

    expect(loaded).toContain('prom-client/lib/registry.js');
    expect(loaded).not.toContain('prom-client/index.js');
    expect(loaded).not.toContain('pushgateway');
    expect(loaded).not.toContain('@opentelemetry');
  });
});
