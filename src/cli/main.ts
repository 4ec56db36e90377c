/** The `janus` command line: dispatches to one command per file under commands/. */
import { VERSION } from '../version.ts';
import { type Command, parse, renderHelp, UsageError } from './command.ts';
import controller from './commands/controller.ts';

const COMMANDS: Command[] = [controller as unknown as Command];

function topLevelHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return `janus ${VERSION}: transactional GitOps for Kubernetes

Usage: janus <command> [flags]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n')}

Run 'janus <command> --help' for a command's flags. Every flag has an environment variable.
`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stderr.write(topLevelHelp());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"\n\n${topLevelHelp()}`);
  const { values, args, help } = parse(command, rest, process.env);
  if (help) {
    process.stderr.write(renderHelp(command));
    return 0;
  }
  return command.run(values, args);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      process.stderr.write(`janus: ${e.message}\n`);
      process.exitCode = e.exitCode;
    } else {
      process.stderr.write(`janus: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    }
  },
);
