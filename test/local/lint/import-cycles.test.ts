/**
 * `npm run lint` refuses every import cycle, type-only ones included: Biome's noImportCycles
 * ignores `import type` by default (`ignoreTypes`), and biome.json turns that off. Shown on a
 * two-file fixture linted by the real Biome with the repository's own linter settings.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIOME = join(ROOT, 'node_modules/.bin/biome');

interface Config {
  linter: { rules: { suspicious: Record<string, unknown> } };
  [key: string]: unknown;
}

/** biome.json as the repository has it, for a folder outside Git. */
function repositoryConfig(): Config {
  const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as Config;
  return { ...config, vcs: { enabled: false }, files: { includes: ['**'] } };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Lints `files` with `config`; Biome's exit status and output. */
function lint(config: Config, files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'janus-lint-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const run = spawnSync(BIOME, ['lint', '--only=suspicious/noImportCycles', '.'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Two modules that need only each other's types. */
const TYPE_ONLY_CYCLE = {
  'strategy.ts':
    "import type { Create } from './create.ts';\nexport interface Strategy { create?: Create }\n",
  'create.ts': "import type { Strategy } from './strategy.ts';\nexport interface Create { of?: Strategy }\n",
};

describe('import cycles in npm run lint (biome.json)', () => {
  it('fails on a cycle of type-only imports', () => {
    const { status, output } = lint(repositoryConfig(), TYPE_ONLY_CYCLE);

    expect(status).not.toBe(0);
    expect(output).toContain('lint/suspicious/noImportCycles');
    expect(output).toContain('This import is part of a cycle');
  });

  it("would pass it with Biome's default (ignoreTypes), so the setting is what catches it", () => {
    const config = repositoryConfig();
    config.linter.rules.suspicious.noImportCycles = 'error';

    const { status, output } = lint(config, TYPE_ONLY_CYCLE);

    expect(output).not.toContain('lint/suspicious/noImportCycles');
    expect(status).toBe(0);
  });

  it('passes once the shared type has a file of its own', () => {
    const { status } = lint(repositoryConfig(), {
      'change-strategy.ts': 'export interface Strategy { name: string }\n',
      'strategy.ts':
        "import type { Create } from './create.ts';\nexport type Table = Record<string, Create>;\n",
      'create.ts':
        "import type { Strategy } from './change-strategy.ts';\nexport interface Create { of?: Strategy }\n",
    });

    expect(status).toBe(0);
  });
});
