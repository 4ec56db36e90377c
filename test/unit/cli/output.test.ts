import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { formatDocument, parseOutput } from '../../../src/cli/output.ts';

describe('-o', () => {
  it('accepts the formats a command offers, and nothing else', () => {
    expect(parseOutput(undefined, ['json', 'yaml'])).toBeUndefined();
    expect(parseOutput('', ['json', 'yaml'])).toBeUndefined();
    expect(parseOutput('yaml', ['json', 'yaml'])).toBe('yaml');
    expect(() => parseOutput('wide', ['json', 'yaml'])).toThrow(
      '-o/--output: expected json or yaml, got "wide"',
    );
  });

  it('prints documents that parse back to the same value', () => {
    const value = { items: [{ name: 'a', n: 1 }] };
    expect(JSON.parse(formatDocument(value, 'json'))).toEqual(value);
    expect(parseYaml(formatDocument(value, 'yaml'))).toEqual(value);
    expect(formatDocument(value, 'yaml')).toMatch(/^---\n/);
  });
});
