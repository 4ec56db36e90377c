/**
 * Product code imports product code only: the image ships src/ compiled (no test/), and a
 * package may leave test/ out. `janus demo` once loaded test/support at run time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
/** Shipped next to dist/ in the image (the Dockerfile copies it): the version comes from it. */
const SHIPPED_OUTSIDE_SRC = new Set([resolve(SRC, '../package.json')]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Relative specifiers of static imports, re-exports and dynamic import() calls. */
function relativeImports(text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.[^'"]*)['"]/g)];
  return specifiers.map((m) => m[1] ?? '');
}

describe('src/', () => {
  it('imports nothing from outside src/ (no test code at run time)', () => {
    const outside = sourceFiles(SRC).flatMap((file) =>
      relativeImports(readFileSync(file, 'utf8'))
        .map((spec) => ({ spec, target: resolve(dirname(file), spec) }))
        .filter(({ target }) => relative(SRC, target).startsWith('..') && !SHIPPED_OUTSIDE_SRC.has(target))
        .map(({ spec }) => spec)
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(outside).toEqual([]);
  });

  it('loads nothing from test/ by path', () => {
    const loaders = sourceFiles(SRC).filter((file) => /test\/support/.test(readFileSync(file, 'utf8')));
    expect(loaders.map((file) => relative(SRC, file))).toEqual([]);
  });
});
