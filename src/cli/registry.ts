/**
 * Every `janus` command, in the order `janus --help` lists them. A command's module is loaded only
 * when it runs: `janus controller` then carries neither the Git stack nor the demo, and
 * `janus validate` starts without the Kubernetes client.
 */
import type { Command } from './command.ts';

export interface CommandEntry {
  name: string;
  /** One line, shown in `janus --help`. */
  summary: string;
  load(): Promise<Command>;
}

// A command's flags type its run(); the registry only needs the common shape.
const entry = (name: string, summary: string, load: () => Promise<{ default: unknown }>): CommandEntry => ({
  name,
  summary,
  load: async () => (await load()).default as Command,
});

export const COMMANDS: readonly CommandEntry[] = [
  // ── The main job and the controller alone. ──
  entry('run', 'the main job: controller, Git poller and results writer', () => import('./commands/run.ts')),
  entry(
    'controller',
    'run the saga controller alone (no Git side)',
    () => import('./commands/controller.ts'),
  ),
  // ── Pull-request checks. ──
  entry(
    'validate',
    'check transaction directories offline (for pull-request CI)',
    () => import('./commands/validate.ts'),
  ),
  entry(
    'plan',
    'dry-run the transactions of a directory against the cluster and show per-resource diffs',
    () => import('./commands/plan.ts'),
  ),
  // ── Operating transactions. ──
  entry(
    'status',
    'show Transactions: a table, or one in detail with its changes and events',
    () => import('./commands/status.ts'),
  ),
  entry(
    'wait',
    'wait until a Transaction has finished: exit 0 when Committed, 1 otherwise (for CI)',
    () => import('./commands/wait.ts'),
  ),
  entry(
    'trace',
    'name the transaction and Git commit that last changed a cluster object',
    () => import('./commands/trace.ts'),
  ),
  entry(
    'history',
    'list the outcomes on the results branch: when, which transaction, phase, source commit',
    () => import('./commands/history.ts'),
  ),
  entry(
    'rollback',
    'undo a Committed transaction, or retry a rollback that ended Failed',
    () => import('./commands/rollback.ts'),
  ),
  entry(
    'cancel',
    'stop a transaction in flight and undo what it committed, leaving the cluster as it was',
    () => import('./commands/cancel.ts'),
  ),
  entry(
    'recover',
    'inspect, and restore on request, the changes a failed rollback left standing',
    () => import('./commands/recover.ts'),
  ),
  entry(
    'ui',
    'a web view of Transactions on 127.0.0.1: live, with their changes, locks, bake window and history',
    () => import('./commands/ui.ts'),
  ),
  // ── The Git side. ──
  entry(
    'poll',
    'poll the watched branch now and show what the controller did (as flux reconcile source git)',
    () => import('./commands/poll.ts'),
  ),
  entry(
    'suspend',
    'stop applying new transaction directories from Git until janus resume',
    () => import('./commands/suspend.ts'),
  ),
  entry(
    'resume',
    'resume the Git side after janus suspend, and poll at once',
    () => import('./commands/resume.ts'),
  ),
  // ── Shell integration. ──
  entry('completion', 'print a bash or zsh completion script', async () => ({
    default: (await import('./commands/completion.ts')).completionCommand(loadCommands),
  })),
  // ── Trying it out. ──
  entry(
    'demo',
    'try Janus end to end: local control plane, local Git repository, the main job, results',
    () => import('./commands/demo.ts'),
  ),
];

export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** Every command, loaded (for checks that go through all of them). */
export async function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}
