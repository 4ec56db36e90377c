/** Every `janus` command, in the order `janus --help` lists them. */
import type { Command } from './command.ts';
import controller from './commands/controller.ts';
import demo from './commands/demo.ts';
import plan from './commands/plan.ts';
import recover from './commands/recover.ts';
import rollback from './commands/rollback.ts';
import run from './commands/run.ts';
import status from './commands/status.ts';
import validate from './commands/validate.ts';

// A command's flags type its run(); the registry only needs the common shape.
const erase = (command: unknown) => command as Command;

export const COMMANDS: readonly Command[] = [
  // ── The main job and the controller alone (run: src/cli/commands/run.ts). ──
  erase(run),
  erase(controller),
  // ── Pull-request checks (validate: src/cli/commands/validate.ts). ──
  erase(validate),
  erase(plan),
  // ── Operating transactions. ──
  erase(status),
  erase(rollback),
  erase(recover),
  // ── Trying it out. ──
  erase(demo),
];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}
