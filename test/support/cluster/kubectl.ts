/** The real kubectl against the test cluster, as a person would run it. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

export interface KubectlResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kubectl <args>` with `kubeconfig` (one of the run's identities), never failing: the exit
 * status and both outputs are the caller's to judge. `env` adds to the environment, e.g.
 * KUBE_EDITOR for `kubectl edit`.
 */
export function kubectl(
  kubeconfig: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<KubectlResult> {
  const binDir = inject('kube').binDir;
  const tool = binDir ? join(binDir, 'kubectl') : 'kubectl';
  return new Promise((resolve) => {
    execFile(
      tool,
      ['--kubeconfig', kubeconfig, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}
