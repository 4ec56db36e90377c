/**
 * Processes a test spawns die with the test worker: a test that times out, or a run that is
 * interrupted, must not leave controllers running against a control plane that is gone.
 */
import type { ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

export function reapOnExit(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
