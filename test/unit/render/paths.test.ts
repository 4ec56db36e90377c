import { describe, expect, it } from 'vitest';
import { resolveWithin, sourcePath } from '../../../src/render/paths.ts';
import { looksRemote } from '../../../src/render/references.ts';

describe('paths of the checkout', () => {
  it('resolves a reference lexically, refusing absolute ones and those out of the checkout', () => {
    expect(resolveWithin('apps/prod', '../base')).toBe('apps/base');
    expect(resolveWithin('apps/prod', './a/../b.yaml')).toBe('apps/prod/b.yaml');
    expect(resolveWithin('apps', '..')).toBe('');
    expect(resolveWithin('', '.')).toBe('');
    expect(resolveWithin('apps/prod', '../../..')).toBeUndefined();
    expect(resolveWithin('apps', '../../etc/passwd')).toBeUndefined();
    expect(resolveWithin('', '/etc/passwd')).toBeUndefined();
    expect(resolveWithin('a', 'b\0c')).toBeUndefined();
  });

  it("checks a source's path", () => {
    expect(sourcePath('deploy/prod/')).toBe('deploy/prod');
    expect(sourcePath('.')).toBe('');
    expect(sourcePath('')).toBe('');
    expect(sourcePath('/deploy')).toBeUndefined();
    expect(sourcePath('deploy/../x')).toBeUndefined();
    expect(sourcePath('deploy//x')).toBeUndefined();
  });

  it('tells remote references from local paths', () => {
    for (const remote of [
      'https://x/y',
      'HTTP://x',
      'git@github.com:o/r',
      'git::https://x',
      'github.com/o/r',
      'base?ref=v1',
      'oci://r/c',
    ])
      expect(looksRemote(remote), remote).toBe(true);
    for (const local of ['../base', 'base', 'config.d/base', 'a/github.com/x', 'file.yaml'])
      expect(looksRemote(local), local).toBe(false);
  });
});
