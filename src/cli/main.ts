/**
 * The `janus` command line: dispatches to one command per file under commands/. Commands are
 * registered in registry.ts.
 */
import { errorText } from '../log/describe-error.ts';
import { VERSION } from '../version.ts';
import { parse, renderHelp, UsageError } from './command.ts';
import { COMMANDS, findCommand } from './registry.ts';

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
  if (name === 'help' && rest[0] !== undefined) return main([rest[0], '--help']);
  if (name === undefined) {
    process.stderr.write(topLevelHelp()); // a usage error: no command
    return 2;
  }
  // Help that was asked for goes to stdout, so `janus --help | less` and `| grep` work (as with
  // kubectl and flux); errors stay on stderr.
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(topLevelHelp());
    return 0;
  }
  if (name === '--version' || name === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const entry = findCommand(name);
  if (!entry) throw new UsageError(`unknown command "${name}"\n\n${topLevelHelp()}`);
  const command = await entry.load();
  const { values, args, help } = parse(command, rest, process.env);
  if (help) {
    process.stdout.write(renderHelp(command));
    return 0;
  }
  return command.run(values, args);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const code = e instanceof UsageError ? e.exitCode : 1;
    // One line for an expected failure (a refusal, an unreachable server, a missing file, a usage
    // error); a stack only for a programming error. See src/log/describe-error.ts.
    const message = errorText(e);
    // A command that failed may have left a listener or a timer behind (an operations server
    // answering /healthz): exit, so a process that cannot do its job never looks alive.
    process.stderr.write(`janus: ${message}\n`, () => process.exit(code));
  },
);
