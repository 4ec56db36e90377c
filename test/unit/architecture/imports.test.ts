/** The simple import parser the layer test stands on. */
import { describe, expect, it } from 'vitest';
import { folderOf, relativeImports } from './imports.ts';

const MODULE = `/**
 * A module. Its comment names import('./not-an-import.ts') and "from './nor-this.ts';".
 */
import { readFile } from 'node:fs/promises';
import type { KubeClient } from '../kube/client.ts';
import {
  a,
  type B,
} from './local.ts';
import './side-effect.ts';
export { c } from '../saga/status.ts';
export * from "./double.ts";
import data from '../../package.json' with { type: 'json' };

export const text = 'import x from "./inside-a-string.ts";';
// const lazy = () => import('./commented-out.ts');
export const load = () => import('./commands/run.ts');
`;

describe('relativeImports', () => {
  it('finds static, multi-line, side-effect, re-exported and lazy imports, with their lines', () => {
    expect(relativeImports(MODULE)).toEqual([
      { specifier: '../kube/client.ts', line: 5 },
      { specifier: './local.ts', line: 9 },
      { specifier: './side-effect.ts', line: 10 },
      { specifier: '../saga/status.ts', line: 11 },
      { specifier: './double.ts', line: 12 },
      { specifier: '../../package.json', line: 13 },
      { specifier: './commands/run.ts', line: 17 },
    ]);
  });

  it('names the folder of a path below the root, and the root itself as .', () => {
    expect([
      folderOf('kube/client.ts'),
      folderOf('controller/stages/verify.ts'),
      folderOf('version.ts'),
    ]).toEqual(['kube', 'controller', '.']);
  });
});
