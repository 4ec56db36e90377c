/** docs/cli.md is the reference: every command, flag and environment variable must be in it. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCommands } from '../../../src/cli/registry.ts';

const COMMANDS = await loadCommands();

const CLI_MD = join(import.meta.dirname, '../../../docs/cli.md');

async function sections(): Promise<Map<string, string>> {
  const text = await readFile(CLI_MD, 'utf8');
  const out = new Map<string, string>();
  for (const part of text.split(/^## janus /m).slice(1)) {
    const [name = '', ...rest] = part.split('\n');
    out.set(name.trim(), rest.join('\n'));
  }
  return out;
}

describe('docs/cli.md', () => {
  it('has a section per command', async () => {
    expect([...(await sections()).keys()].sort()).toEqual(COMMANDS.map((c) => c.name).sort());
  });

  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    'documents every flag of janus %s, with its variable and default',
    async (name, command) => {
      const section = (await sections()).get(name) ?? '';
      for (const [flag, definition] of Object.entries(command.flags)) {
        const row = section
          .split('\n')
          .find((line) => new RegExp(`^\\| (\`-\\w\`, )?\`--${flag}[ \`]`).test(line));
        expect(row, `--${flag} of janus ${name}`).toBeDefined();
        if (definition.env) expect(row).toContain(`\`${definition.env}\``);
        if (typeof definition.default === 'string') expect(row).toContain(`\`${definition.default}\``);
      }
    },
  );

  it('gives each command a row in the exit status table', async () => {
    const text = await readFile(CLI_MD, 'utf8');
    const table = text.slice(text.indexOf('### Exit status'), text.indexOf('## janus run'));
    for (const command of COMMANDS) expect(table, command.name).toContain(`\`${command.name}\``);
  });
});
