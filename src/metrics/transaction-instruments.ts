import { TERMINAL_PHASES } from '../api/v1alpha1/index.ts';
import { ITEM_COUNT_BUCKETS, TRANSACTION_DURATION_BUCKETS } from './buckets.ts';
import {
  ANALYSIS_RESULTS,
  HEALTH_CHECK_RESULTS,
  HEALTH_CHECKS,
  ITEM_OPERATIONS,
  LOCK_OPERATIONS,
  OPERATION_RESULTS,
} from './labels.ts';
import { Counter, Gauge, Histogram, type Registry } from './prom.ts';

/** The saga's metrics, except the active gauge (see active-transactions.ts). */
export function transactionInstruments(registry: Registry) {
  const registers = [registry];
  const instruments = {
    transitions: new Counter({
      name: 'janus_transaction_phase_transitions_total',
      help: 'Transaction phase changes made by the controller, by phase left and phase entered.',
      labelNames: ['from_phase', 'to_phase'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'janus_transaction_duration_seconds',
      help: 'Time from a transaction leaving Pending to reaching a terminal phase, by outcome.',
      labelNames: ['outcome'] as const,
      buckets: TRANSACTION_DURATION_BUCKETS,
      registers,
    }),
    itemOperations: new Counter({
      name: 'janus_item_operations_total',
      help: 'Saga steps on single target resources, by step and result.',
      labelNames: ['operation', 'result'] as const,
      registers,
    }),
    lockOperations: new Counter({
      name: 'janus_lock_operations_total',
      help: 'Operations on the Leases that lock target resources, by operation and result.',
      labelNames: ['operation', 'result'] as const,
      registers,
    }),
    healthCheck: new Histogram({
      name: 'janus_health_check_duration_seconds',
      help: 'Time the health gate waited, from commit (or rollback) to healthy, unhealthy or out of time, by what it checked and how it ended.',
      labelNames: ['check', 'result'] as const,
      buckets: TRANSACTION_DURATION_BUCKETS,
      registers,
    }),
    analysisMeasurements: new Counter({
      name: 'janus_analysis_measurements_total',
      help: 'Measurements of metric analysis checks taken in bake windows, by what they found.',
      labelNames: ['result'] as const,
      registers,
    }),
    measurementSlots: new Gauge({
      name: 'janus_analysis_measurements_in_flight',
      help: 'Metric analysis measurements running off the reconcile workers, or waiting for a free slot, by state.',
      labelNames: ['state'] as const,
      registers,
    }),
    pruned: new Counter({
      name: 'janus_transactions_pruned_total',
      help: 'Finished Transactions deleted by the retention policy (their record stays on the results branch).',
      registers,
    }),
    itemCount: new Histogram({
      name: 'janus_transaction_item_count',
      help: 'Number of changes in each transaction the controller started.',
      buckets: ITEM_COUNT_BUCKETS,
      registers,
    }),
  };

  // Series with a small, known label set start at zero, so rate() and absent() work from the
  // first scrape. Transitions are left sparse: most of the 64 phase pairs never happen.
  for (const outcome of TERMINAL_PHASES) instruments.duration.zero({ outcome });
  for (const check of HEALTH_CHECKS) {
    for (const result of HEALTH_CHECK_RESULTS) instruments.healthCheck.zero({ check, result });
  }
  for (const result of ANALYSIS_RESULTS) instruments.analysisMeasurements.inc({ result }, 0);
  for (const state of ['running', 'waiting'] as const) instruments.measurementSlots.set({ state }, 0);
  for (const operation of ITEM_OPERATIONS) {
    for (const result of OPERATION_RESULTS) instruments.itemOperations.inc({ operation, result }, 0);
  }
  for (const operation of LOCK_OPERATIONS) {
    for (const result of OPERATION_RESULTS) instruments.lockOperations.inc({ operation, result }, 0);
  }
  return instruments;
}

export type TransactionInstruments = ReturnType<typeof transactionInstruments>;
