/**
 * The relative imports of src/'s modules, read with a simple parser: enough for code that Biome
 * formats (a static import or export starts its line and ends with `from '…';`), and for the
 * loaders of lazy modules (`import('…')`). Comment lines are passed over.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface ImportLine {
  /** The specifier as written, e.g. `../kube/client.ts`. */
  readonly specifier: string;
  /** 1-based line of the specifier. */
  readonly line: number;
}

const STATIC = /^(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])([^'"\n]+)\1\s*(?:with\s*\{[^}]*\}\s*)?;/gm;
const SIDE_EFFECT = /^import\s*(['"])([^'"\n]+)\1\s*;/gm;
const DYNAMIC = /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/** Every relative (`./`, `../`) import of a module's text, static or dynamic. */
export function relativeImports(text: string): ImportLine[] {
  const found: ImportLine[] = [];
  for (const pattern of [STATIC, SIDE_EFFECT, DYNAMIC]) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[2] ?? '';
      const at = (match.index ?? 0) + match[0].lastIndexOf(specifier);
      const lineStart = text.lastIndexOf('\n', at) + 1;
      if (/^\s*(\/\/|\/\*|\*)/.test(text.slice(lineStart, at))) continue; // a comment
      if (specifier.startsWith('.')) found.push({ specifier, line: lineOf(text, at) });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

export interface ModuleImport {
  /** Importing module, relative to the root, e.g. `results/reporter.ts`. */
  readonly from: string;
  readonly line: number;
  /** Imported module, relative to the root; outside it (`../package.json`) it starts with `..`. */
  readonly to: string;
}

/** The relative imports of every .ts module below `root`, with paths relative to `root` ('/'-separated). */
export function importsBelow(root: string): ModuleImport[] {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const slashed = (path: string) => path.split(sep).join('/');
  return files.sort().flatMap((file) =>
    relativeImports(readFileSync(join(root, file), 'utf8')).map(({ specifier, line }) => ({
      from: slashed(file),
      line,
      to: slashed(relative(root, resolve(root, dirname(file), specifier))),
    })),
  );
}

/** The folder of `path` below the root: its first segment, or `.` for a file in the root itself. */
export function folderOf(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? '.' : path.slice(0, slash);
}
