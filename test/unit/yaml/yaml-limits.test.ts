/**
 * The limits that keep one hostile YAML file from stalling or crashing the poller: each one is
 * refused quickly, with a diagnostic naming the file and the line, and nothing of it is converted.
 */
import { describe, expect, it, vi } from 'vitest';
import { parseYamlFile, parseYamlValue } from '../../../src/yaml/yaml-file.ts';
import { YAML_LIMITS } from '../../../src/yaml/yaml-limits.ts';

const MiB = 1024 * 1024;

/** Parses `text` and returns the result with how long it took. */
/**
 * Parses a hostile file. How long that takes is measured by benchmarks, not here: these inputs
 * take the library alone minutes (or all memory), so the generous test timeout below is only the
 * backstop that turns a lost guard into a failure, never a bound a loaded machine could miss.
 */
vi.setConfig({ testTimeout: 120_000 });

function hostile(text: string): ReturnType<typeof parseYamlFile> {
  return parseYamlFile('transactions/x/10-bomb.create.yaml', text);
}

/** `depth` collections nested in one another, as block mappings. */
function blockMaps(depth: number): string {
  return `${Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} leaf\n`;
}

describe('nesting', () => {
  it.each([
    ['brackets', '['.repeat(MiB - 1), 1, 101],
    ['braces', '{a: '.repeat(MiB / 4), 1, 401],
    ['compact block sequences', `${'- '.repeat(MiB / 2 - 2)}x\n`, 1, 201],
    ['indented block mappings', blockMaps(1400), 101, 101],
    ['flow inside block', `a:\n  b: ${'['.repeat(200_000)}\n`, 2, 104],
  ])('refuses 1 MiB of %s before the library recurses', (_name, text, line, column) => {
    const parsed = hostile(text);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toEqual([
      {
        code: 'yaml-too-complex',
        file: 'transactions/x/10-bomb.create.yaml',
        line,
        column,
        message: 'collections are nested more than 100 levels deep; the file was not parsed',
      },
    ]);
  });

  it('accepts nesting up to the limit, in flow and block style', () => {
    const flow = `${'['.repeat(YAML_LIMITS.maxDepth)}1${']'.repeat(YAML_LIMITS.maxDepth)}\n`;
    const parsed = parseYamlFile('f.yaml', flow);
    expect(parsed.diagnostics).toEqual([]);
    let value = parsed.documents[0]?.value;
    for (let i = 0; i < YAML_LIMITS.maxDepth; i++) value = (value as unknown[])[0];
    expect(value).toBe(1);
    expect(parseYamlFile('f.yaml', blockMaps(YAML_LIMITS.maxDepth)).diagnostics).toEqual([]);
    expect(parseYamlFile('f.yaml', blockMaps(YAML_LIMITS.maxDepth + 1)).diagnostics).toEqual([
      expect.objectContaining({ code: 'yaml-too-complex', line: 101 }),
    ]);
  });

  it('does not count brackets inside scalars, quotes, block scalars or comments', () => {
    const text = [
      'apiVersion: v1',
      'kind: ConfigMap',
      `metadata: {name: "${'['.repeat(500)}"}`,
      'data:',
      `  plain: a${'['.repeat(500)}`,
      `  single: '${'{'.repeat(500)}'`,
      '  script: |',
      `    ${'['.repeat(500)}`,
      `# ${'['.repeat(500)}`,
      '',
    ].join('\n');
    const parsed = parseYamlFile('f.yaml', text);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.documents[0]?.value).toMatchObject({ data: { script: `${'['.repeat(500)}\n` } });
  });

  it('names the document of a multi-document file when it is not the first', () => {
    const parsed = parseYamlFile('f.yaml', `a: 1\n---\nb: ${'['.repeat(150)}\n`);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toEqual([
      // The block mapping counts: b's hundredth bracket is the 101st collection.
      expect.objectContaining({ code: 'yaml-too-complex', line: 3, column: 103 }),
    ]);
  });
});

describe('aliases', () => {
  /** The classic: ten aliases of the level below, `levels` times: 10^levels leaves. */
  function laughs(levels: number): string {
    const lines = ['l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i <= levels; i++)
      lines.push(
        `l${i}: &l${i} [${Array(10)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    return `${lines.join('\n')}\n`;
  }

  it('refuses a billion laughs without expanding it, naming the alias that crossed the limit', () => {
    const parsed = hostile(laughs(9));
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toEqual([
      {
        code: 'yaml-too-complex',
        file: 'transactions/x/10-bomb.create.yaml',
        line: 6,
        column: expect.any(Number),
        message: `aliases expand to more than ${YAML_LIMITS.maxAliasExpansionBytes} bytes of YAML (at *l4)`,
      },
    ]);
  });

  it('accepts aliases that stay within the limits, as the library converts them', () => {
    const parsed = parseYamlFile('f.yaml', laughs(2));
    expect(parsed.diagnostics).toEqual([]);
    const value = parsed.documents[0]?.value as Record<string, unknown[][]>;
    expect(value.l2).toHaveLength(10);
    expect(value.l2?.[9]).toHaveLength(10);
    // Used more often than the library's own default (maxAliasCount 100) would allow.
    const many = `base: &b {cpu: 1}\nitems: [${Array(300).fill('*b').join(', ')}]\n`;
    expect(parseYamlFile('f.yaml', many).documents[0]?.value).toMatchObject({ items: expect.any(Array) });
  });

  it('refuses one large node aliased many times', () => {
    const text = `big: &big "${'x'.repeat(100_000)}"\ncopies: [${Array(20).fill('*big').join(', ')}]\n`;
    expect(parseYamlFile('f.yaml', text).diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml-too-complex',
        line: 2,
        message: expect.stringContaining('(at *big)'),
      }),
    ]);
  });

  it('refuses too many anchors, and too many aliases, without comparing every pair', () => {
    const pairs = Array.from({ length: 60_000 }, (_, i) => `- &a${i} x\n- *a${i}\n`).join('');
    const anchors = hostile(pairs);
    expect(anchors.diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml-too-complex',
        line: 2001,
        column: 10, // the anchored node
        message: `more than ${YAML_LIMITS.maxAnchors} anchors in one file`,
      }),
    ]);
    const aliases = parseYamlFile('f.yaml', `- &a x\n${'- *a\n'.repeat(1500)}`);
    expect(aliases.diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml-too-complex',
        line: 1002,
        column: 3,
        message: `more than ${YAML_LIMITS.maxAliases} aliases in one file`,
      }),
    ]);
  });

  it('refuses aliases that nest collections too deep', () => {
    const lines = ['a0: &a0 [x]'];
    for (let i = 1; i <= 120; i++) lines.push(`a${i}: &a${i} [*a${i - 1}]`);
    const parsed = parseYamlFile('f.yaml', `${lines.join('\n')}\n`);
    expect(parsed.diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml-too-complex',
        line: 100,
        message: 'through alias *a98, collections are nested more than 100 levels deep',
      }),
    ]);
  });

  it('refuses an alias inside the node it refers to', () => {
    expect(parseYamlFile('f.yaml', 'a: &a\n  b: *a\n').diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml-too-complex',
        line: 2,
        column: 6,
        message: 'alias *a is inside the node it refers to',
      }),
    ]);
  });
});

describe('cost', () => {
  it('checks duplicate keys without comparing every pair, as the library would', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}\n`).join('');
    const parsed = hostile(`${keys}k7: again\n`);
    expect(parsed.diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml-syntax',
        line: 40_001,
        column: 1,
        message: 'YAML syntax error: Map keys must be unique',
      }),
    ]);
    expect(parseYamlFile('f.yaml', '{a: 1, b: 2, a: 3}\n').diagnostics).toEqual([
      expect.objectContaining({ line: 1, column: 14, message: 'YAML syntax error: Map keys must be unique' }),
    ]);
    expect(parseYamlFile('f.yaml', 'a: 1\n"a": 2\n1: x\n"1": y\n').diagnostics).toEqual([
      expect.objectContaining({ line: 2, column: 1 }),
    ]);
  });

  it('stops after the first errors: 1 MiB of errors is one diagnostic, not a million', () => {
    const parsed = hostile(']'.repeat(MiB));
    expect(parsed.diagnostics).toEqual([
      {
        code: 'yaml-syntax',
        file: 'transactions/x/10-bomb.create.yaml',
        line: 1,
        column: 1,
        message: expect.stringMatching(
          new RegExp(
            `^YAML syntax error: .+ \\(and more than ${YAML_LIMITS.maxErrors} errors in all; the file was not read further\\)$`,
          ),
        ),
      },
    ]);
  });

  it('reports a handful of errors in full', () => {
    const parsed = parseYamlFile('f.yaml', 'a: [1\nb: {c\n');
    expect(parsed.diagnostics.length).toBeGreaterThan(0);
    expect(parsed.diagnostics.length).toBeLessThanOrEqual(YAML_LIMITS.maxErrors);
    expect(parsed.diagnostics.every((d) => d.code === 'yaml-syntax' && d.line !== undefined)).toBe(true);
  });
});

describe('parseYamlValue', () => {
  it('reads a plain file, and gives up on a broken or hostile one', () => {
    expect(parseYamlValue('phase: Committed\n')).toEqual({ phase: 'Committed' });
    expect(parseYamlValue('')).toBeNull();
    expect(parseYamlValue('a: [1\n')).toBeUndefined();
    expect(parseYamlValue('['.repeat(10_000))).toBeUndefined();
  });
});
