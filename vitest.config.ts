import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: '.tmp/vitest-report.json' }]]
      : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          globalSetup: ['test/support/unit-setup.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          // Real processes on a 2-core machine: generous limits, and assertions that poll, never sleep.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: 'forks',
          maxWorkers: 2,
        },
      },
    ],
  },
});
