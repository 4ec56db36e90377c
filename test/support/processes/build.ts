/**
 * The compiled program the container image runs (npm run build: src/ → dist/). Built once per
 * test run (the local, cluster and crash tiers' global setups, the benchmarks) so long-running processes
 * start through the entry point that ships.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/manifests.ts';

/** The image's entry point, relative to the repository (and to /app in the image): it picks the Node flags, then runs main.js. */
export const SHIPPED_MAIN = 'dist/cli/launch.js';

/** Compiles src/ into `outDir` (default dist/) with tsconfig.build.json; throws with tsc's output on failure. */
export function buildDist(outDir = join(REPO_ROOT, 'dist')): void {
  const tsc = join(REPO_ROOT, 'node_modules/.bin/tsc');
  const result = spawnSync(tsc, ['-p', 'tsconfig.build.json', '--outDir', outDir], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(
      `npm run build failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`,
    );
  }
}
