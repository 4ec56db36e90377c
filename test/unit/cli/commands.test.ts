import { describe, expect, it } from 'vitest';
import { parse, renderHelp } from '../../../src/cli/command.ts';
import { loadCommands } from '../../../src/cli/registry.ts';

const COMMANDS = await loadCommands();

describe('every janus command', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    '%s documents its exit codes and an example or two',
    (_name, command) => {
      const help = renderHelp(command);
      expect(help).toMatch(/^Usage: janus /);
      expect(help).toMatch(/Exit status: 0 /);
    },
  );

  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    '%s gives every flag an environment variable',
    (_name, command) => {
      for (const [flag, definition] of Object.entries(command.flags)) {
        // A negation (--no-x) is the off switch of a flag that has one.
        const positive = flag.startsWith('no-') ? command.flags[flag.slice(3)] : undefined;
        expect(definition.env ?? positive?.env, `--${flag} of janus ${command.name}`).toMatch(
          /^[A-Z][A-Z0-9_]+$/,
        );
      }
    },
  );

  it('gives no two flags of one command the same environment variable', () => {
    for (const command of COMMANDS) {
      const envs = Object.values(command.flags).flatMap((f) => (f.env ? [f.env] : []));
      expect(new Set(envs).size, command.name).toBe(envs.length);
    }
  });

  it('reads a flag from its environment variable when it is not given', () => {
    const status = COMMANDS.find((c) => c.name === 'status');
    if (!status) throw new Error('status is not registered');
    const fromEnv = parse(status, [], {
      JANUS_NAMESPACE: 'shop',
      JANUS_ALL_NAMESPACES: 'true',
      JANUS_OUTPUT: 'yaml',
    });
    expect(fromEnv.values).toMatchObject({ namespace: 'shop', 'all-namespaces': true, output: 'yaml' });
    const given = parse(status, ['-n', 'other', '-o', 'json'], {
      JANUS_NAMESPACE: 'shop',
      JANUS_OUTPUT: 'yaml',
    });
    expect(given.values).toMatchObject({ namespace: 'other', output: 'json' });
  });
});
