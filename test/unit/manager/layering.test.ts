/**
 * The process runtime lives in src/manager, below the CLI: the manager imports nothing from
 * src/cli, and no command module imports another (the flags they share live outside commands/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

/** The repository-relative modules `file` imports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)].map((m) => m[1] ?? '');
  return specifiers.map((s) => relative(SRC, resolve(file, '..', s)));
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(SRC, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(SRC, dir, f));
}

describe('the manager layer', () => {
  it('src/manager imports nothing from src/cli', () => {
    const offending = filesUnder('manager').flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('cli/'))
        .map((target) => `${relative(SRC, file)} → ${target}`),
    );

    expect(offending).toEqual([]);
  });

  it('no module imports a command module, but the registry that loads them', () => {
    const offending = [...filesUnder('')].flatMap((file) => {
      const from = relative(SRC, file);
      if (from === 'cli/registry.ts') return [];
      return importsOf(file)
        .filter((target) => target.startsWith('cli/commands/'))
        .map((target) => `${from} → ${target}`);
    });

    expect(offending).toEqual([]);
  });
});
