/**
 * The controller's measurement runner: metric analysis measurements run beside the reconcile
 * workers, never on them (stages/analysis.ts asks, src/runtime/slot-runner.ts runs). Its bounds:
 *
 * - MEASUREMENTS_IN_FLIGHT (64) measurements at once over all namespaces: what Prometheus (or
 *   the checks' addresses) receives from Janus at most at a time;
 * - MEASUREMENTS_PER_NAMESPACE (16, a transaction's most checks) of one namespace, so one
 *   namespace's many analysed transactions leave slots to the others; a free slot goes to the
 *   least busy namespace first.
 *
 * A measurement whose slot is not free waits (its check stays due; the window does not end while
 * a check has not measured). Each one ends within its request timeout (10 s by default,
 * --analysis-timeout), so a slot is never held longer.
 */
import type { Measurement } from '../analysis/index.ts';
import type { Logger } from '../log/index.ts';
import type { SlotCaps } from '../runtime/slot-rules.ts';
import { SlotRunner, type SlotRunnerMetrics } from '../runtime/slot-runner.ts';

export const MEASUREMENTS_IN_FLIGHT = 64;
export const MEASUREMENTS_PER_NAMESPACE = 16;

export const MEASUREMENT_CAPS: SlotCaps = {
  total: MEASUREMENTS_IN_FLIGHT,
  perGroup: MEASUREMENTS_PER_NAMESPACE,
};

export function measurementRunner(opts: {
  caps?: SlotCaps | undefined;
  metrics?: SlotRunnerMetrics | undefined;
  logger?: Logger | undefined;
}): SlotRunner<Measurement> {
  return new SlotRunner<Measurement>({
    caps: opts.caps ?? MEASUREMENT_CAPS,
    metrics: opts.metrics,
    logger: opts.logger,
  });
}
