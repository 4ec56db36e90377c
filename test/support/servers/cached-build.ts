/**
 * A tool built from its pinned Go module by a script under test/kube-testenv/: the script builds
 * it once into its cache (a cold build takes minutes), then answers from the cache in milliseconds
 * with the folder it is in, on its last line of output. `override`, when set, is that folder.
 */
import { execFileSync } from 'node:child_process';

export function builtBinaries(script: string, override: string | undefined): string {
  return (
    override ??
    execFileSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop() ??
    ''
  );
}
