/**
 * `janus completion bash|zsh`: prints the shell completion script. It completes every command,
 * so it is given them: the registry loads this command, and importing the registry here would
 * make the two a cycle.
 */
import { type Command, defineCommand, UsageError } from '../command.ts';
import { bashCompletion, zshCompletion } from '../completion-script.ts';
import { processStreams } from '../output.ts';

export const completionCommand = (loadCommands: () => Promise<Command[]>) =>
  defineCommand({
    name: 'completion',
    usage: 'janus completion bash|zsh',
    description: `
Prints a completion script for bash or zsh on stdout: commands, each command's flags, and the
values of -o/--output, --initial and --log-level.

  source <(janus completion bash)                        # this shell
  janus completion bash > /etc/bash_completion.d/janus   # every shell
  source <(janus completion zsh)                         # zsh (uses bashcompinit)

Exit status: 0 printed; 2 usage error (another shell).`,
    flags: {},
    async run(_values, args) {
      const [shell, ...extra] = args;
      if ((shell !== 'bash' && shell !== 'zsh') || extra.length > 0) {
        throw new UsageError('expected the shell: janus completion bash, or janus completion zsh');
      }
      const commands = await loadCommands();
      processStreams().stdout.write(shell === 'bash' ? bashCompletion(commands) : zshCompletion(commands));
      return 0;
    },
  });
