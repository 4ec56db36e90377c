/**
 * The parts of prom-client Janus uses, loaded file by file rather than through its index.
 *
 * The index also loads the Pushgateway (http, https, url), the cluster aggregator, Summary's
 * t-digest and, for the CPU metric's exemplars, @opentelemetry/api (51 modules): 1.3–1.6 MiB of
 * resident memory in a controller that uses none of them (measured with the controller's other
 * modules loaded). prom-client has no `exports` map, so these paths are public in practice;
 * test/local/metrics/prom.test.ts fails if an upgrade moves them, and checks that the default
 * metrics below are still all of prom-client's.
 */
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry: typeof Prom.Registry = require('prom-client/lib/registry.js');
export const Counter: typeof Prom.Counter = require('prom-client/lib/counter.js');
export const Gauge: typeof Prom.Gauge = require('prom-client/lib/gauge.js');
export const Histogram: typeof Prom.Histogram = require('prom-client/lib/histogram.js');
export const exponentialBuckets: typeof Prom.exponentialBuckets =
  require('prom-client/lib/bucketGenerators.js').exponentialBuckets;

export type Registry = Prom.Registry;
export type Counter<T extends string = string> = Prom.Counter<T>;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export type Histogram<T extends string = string> = Prom.Histogram<T>;

type DefaultMetric = (
  registry: Registry,
  config: { prefix: string; eventLoopMonitoringPrecision: number },
) => void;

/** prom-client's default metrics but the CPU one, which is the only one that needs OpenTelemetry. */
const DEFAULT_METRIC_FILES = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processResources',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
] as const;

/**
 * What prom-client's `collectDefaultMetrics` registers (process CPU, memory, file descriptors,
 * event-loop lag, handles, heap, GC, version), with the same names, under `prefix`.
 */
export function collectDefaultMetrics(registry: Registry, prefix: string): void {
  const config = { prefix, eventLoopMonitoringPrecision: 10 };
  processCpu(registry, prefix);
  for (const file of DEFAULT_METRIC_FILES)
    (require(`prom-client/lib/metrics/${file}.js`) as DefaultMetric)(registry, config);
}

/** process_cpu_{user,system}_seconds_total and process_cpu_seconds_total, as prom-client's without exemplars. */
function processCpu(registry: Registry, prefix: string): void {
  let last = process.cpuUsage();
  const system = new Counter({
    name: `${prefix}process_cpu_system_seconds_total`,
    help: 'Total system CPU time spent in seconds.',
    registers: [registry],
  });
  const total = new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: 'Total user and system CPU time spent in seconds.',
    registers: [registry],
  });
  new Counter({
    name: `${prefix}process_cpu_user_seconds_total`,
    help: 'Total user CPU time spent in seconds.',
    registers: [registry],
    // One collect sets all three, as prom-client does.
    collect() {
      const now = process.cpuUsage();
      const user = (now.user - last.user) / 1e6;
      const sys = (now.system - last.system) / 1e6;
      last = now;
      this.inc(user);
      system.inc(sys);
      total.inc(user + sys);
    },
  });
}
