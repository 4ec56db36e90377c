/** `janus completion`: the bash script completes commands, flags and flag values in a real bash. */
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { janus } from '../../support/processes/cli.ts';

/** What bash offers after `words` (the last one being completed), with the script loaded. */
function complete(script: string, words: string[]): string[] {
  const line = words.map((w) => `'${w}'`).join(' ');
  const result = spawnSync(
    'bash',
    [
      '-c',
      `source "$0"; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _janus; printf '%s\\n' "\${COMPREPLY[@]}"`,
      script,
    ],
    { encoding: 'utf8' },
  );
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean).sort();
}

describe('janus completion', () => {
  it('bash: commands, a command’s flags, and -o values', async () => {
    const result = await janus(['completion', 'bash']);
    expect(result.code).toBe(0);
    const file = join(await mkdtemp(join(tmpdir(), 'janus-completion-')), 'janus.bash');
    await writeFile(file, result.stdout);
    expect(complete(file, ['janus', 'st'])).toEqual(['status']);
    expect(complete(file, ['janus', 'c'])).toEqual(['cancel', 'completion', 'controller']);
    expect(complete(file, ['janus', 'status', '--w'])).toEqual(['--watch']);
    expect(complete(file, ['janus', 'trace', '-'])).toEqual(
      ['--context', '--help', '--kubeconfig', '--namespace', '--output', '-n', '-o'].sort(),
    );
    expect(complete(file, ['janus', 'status', '-o', ''])).toEqual(['json', 'yaml']);
    expect(complete(file, ['janus', 'help', 'ro'])).toEqual(['rollback']);
  });

  it('zsh: the same completion through bashcompinit; another shell is a usage error', async () => {
    const zsh = await janus(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.split('\n')[0]).toBe('#compdef janus');
    expect(zsh.stdout).toContain('autoload -U +X bashcompinit && bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _janus janus');
    const fish = await janus(['completion', 'fish']);
    expect(fish.code).toBe(2);
    expect(fish.stderr).toContain('janus completion bash, or janus completion zsh');
  });
});
