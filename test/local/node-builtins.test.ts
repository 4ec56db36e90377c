import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The Node built-ins loaded once `module` (a path from the repository root) is imported. */
function builtinsLoadedBy(module: string): string[] {
  const path = fileURLToPath(new URL(`../../${module}`, import.meta.url));
  const script = `await import(${JSON.stringify(path)}); console.log(process.moduleLoadList.join('\\n'));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('NativeModule '))
    .map((line) => line.slice('NativeModule '.length));
}

describe('the built-ins the controller loads (src/node-builtins.ts)', () => {
  it('leave out undici, http2 and zlib, which an ESM import of node:http drags in', () => {
    const loaded = builtinsLoadedBy('src/cli/commands/controller.ts');

    expect(loaded).toContain('https');
    expect(loaded).not.toContain('internal/deps/undici/undici');
    expect(loaded).not.toContain('http2');
    expect(loaded).not.toContain('zlib');
  });

  it('would fail if a module imported node:http again', () => {
    const script = `await import('node:http'); console.log(process.moduleLoadList.join('\\n'));`;
    const loaded = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });

    expect(loaded).toContain('NativeModule internal/deps/undici/undici');
  });
});
