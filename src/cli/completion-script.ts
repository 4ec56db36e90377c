/**
 * Shell completion scripts, generated from the commands and their flags (so they never drift):
 * bash natively, zsh through its bash compatibility layer (bashcompinit), as kubectl and flux
 * also ship. Pure.
 */
import type { Command } from './command.ts';

/** Flags that take one of a few words, completed too. */
const FLAG_VALUES: Record<string, readonly string[]> = {
  '--output': ['json', 'yaml'],
  '-o': ['json', 'yaml'],
  '--initial': ['apply', 'baseline'],
  '--log-level': ['debug', 'info', 'warn', 'error'],
};

function flagWords(command: Command): string[] {
  const words = ['--help'];
  for (const [name, flag] of Object.entries(command.flags)) {
    words.push(`--${name}`);
    if (flag.short) words.push(`-${flag.short}`);
  }
  return words;
}

export function bashCompletion(commands: readonly Command[]): string {
  const names = [...commands.map((c) => c.name), 'help'].join(' ');
  const cases = commands.map((c) => `    ${c.name}) flags="${flagWords(c).join(' ')}" ;;`).join('\n');
  const values = Object.entries(FLAG_VALUES)
    .map(
      ([flag, words]) => `    ${flag}) COMPREPLY=($(compgen -W "${words.join(' ')}" -- "$cur")); return ;;`,
    )
    .join('\n');
  return `# bash completion for janus. Load it with:
#   source <(janus completion bash)
# or install it: janus completion bash > /etc/bash_completion.d/janus
_janus() {
  local cur prev command flags
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "${names}" -- "$cur"))
    return
  fi
  command="\${COMP_WORDS[1]}"
  case "$prev" in
${values}
  esac
  case "$command" in
    help) COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(' ')}" -- "$cur")); return ;;
${cases}
    *) flags="" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F _janus janus
`;
}

export function zshCompletion(commands: readonly Command[]): string {
  return `#compdef janus
# zsh completion for janus (through zsh's bash completion layer). Load it with:
#   source <(janus completion zsh)
# or put it in a directory of your $fpath as _janus.
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(commands)}`;
}
