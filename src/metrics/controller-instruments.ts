import { RECONCILE_BUCKETS } from './buckets.ts';
import { RECONCILE_RESULTS } from './labels.ts';
import { Counter, Gauge, Histogram, type Registry } from './prom.ts';

/** The saga controller's loop and its leader election. */
export function controllerInstruments(registry: Registry, leaderLease: string) {
  const registers = [registry];
  const instruments = {
    reconciles: new Counter({
      name: 'janus_reconcile_total',
      help: 'Reconciles of Transaction resources, by result.',
      labelNames: ['result'] as const,
      registers,
    }),
    reconcileDuration: new Histogram({
      name: 'janus_reconcile_duration_seconds',
      help: 'Time taken by one reconcile of one Transaction.',
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    leader: new Gauge({
      name: 'janus_leader',
      help: '1 while this replica holds the leader Lease (label lease: namespace/name) and runs transactions, else 0.',
      labelNames: ['lease'] as const,
      registers,
    }),
    installationConflicts: new Counter({
      name: 'janus_installation_conflicts_total',
      help: 'Transactions this installation found written by another live installation of its instance, and so did not drive (the Event InstallationConflict names it).',
      registers,
    }),
    setLeader(leading: boolean): void {
      instruments.leader.set({ lease: leaderLease }, leading ? 1 : 0);
    },
  };
  instruments.setLeader(false);

  for (const result of RECONCILE_RESULTS) instruments.reconciles.inc({ result }, 0);
  instruments.installationConflicts.inc(0);
  return instruments;
}

export type ControllerInstruments = ReturnType<typeof controllerInstruments>;
