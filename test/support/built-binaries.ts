/** The folder of a test binary built from its Go module by a test/kube-testenv/build-*.sh script. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const known = new Map<string, string>();

/**
 * `override` (an environment variable's value) when set, else what `script` prints last: the
 * script builds once, then answers from its cache. Asked once per process.
 */
export function builtBinaries(script: string, override: string | undefined): string {
  const path = fileURLToPath(new URL(`../kube-testenv/${script}`, import.meta.url));
  let dir = override ?? known.get(path);
  dir ??=
    execFileSync('bash', [path], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop() ?? '';
  known.set(path, dir);
  return dir;
}
