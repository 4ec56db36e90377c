import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/longest-first.ts';

/**
 * Four tiers, each a project (test/README.md): `unit` is pure and needs nothing built; `local`
 * runs real tools (git, sops, ssh-keygen, git http-backend) but no cluster; `cluster` and `crash`
 * share one real control plane. `npm test` runs them all; `npm run test:<tier>` runs one.
 */
const REAL_PROCESSES = {
  // Real processes on a 2-core machine: generous limits, and assertions that poll, never sleep.
  testTimeout: 180_000,
  hookTimeout: 180_000,
  pool: 'forks',
  maxWorkers: 2,
} as const;

/**
 * The cluster and crash tiers' files mostly wait on real rollouts, bake windows and polls: with
 * two at a time on a 2-core machine half the CPU sat idle (test/bench/results/ci.md), so a third
 * runs beside them. JANUS_CLUSTER_WORKERS sets another number (a slower machine: 2).
 */
const WAITING_ON_A_CLUSTER = {
  ...REAL_PROCESSES,
  maxWorkers: Number(process.env.JANUS_CLUSTER_WORKERS ?? 3),
} as const;

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirst },
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: process.env.JANUS_VITEST_REPORT ?? '.tmp/vitest-report.json' }]]
      : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: ['test/unit/**/*.test.ts'],
          globalSetup: ['test/support/unit-setup.ts'],
          setupFiles: ['test/support/unit-guard.ts'],
          // Pure and fast, but a few build the largest inputs the bounds allow (a 512-change rollback
          // store, a pack of many objects): on a loaded 2-core machine 5 s is not always enough.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'local',
          sequence: { groupOrder: 1 },
          include: ['test/local/**/*.test.ts'],
          globalSetup: ['test/support/local-setup.ts'],
          ...REAL_PROCESSES,
        },
      },
      {
        test: {
          name: 'cluster',
          sequence: { groupOrder: 2 },
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: ['test/support/cluster/global-setup.ts'],
          ...WAITING_ON_A_CLUSTER,
        },
      },
      {
        test: {
          name: 'crash',
          sequence: { groupOrder: 3 },
          include: ['test/crash/**/*.test.ts'],
          globalSetup: ['test/support/cluster/global-setup.ts'],
          ...WAITING_ON_A_CLUSTER,
        },
      },
    ],
  },
});
