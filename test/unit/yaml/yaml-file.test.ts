import { describe, expect, it } from 'vitest';
import { parseYamlFile } from '../../../src/yaml/yaml-file.ts';

describe('parseYamlFile', () => {
  it('reads leading-zero integers as octal like YAML 1.1 and kubectl, and nothing else of 1.1', () => {
    const { documents } = parseYamlFile(
      'f.yaml',
      'a: 0644\nb: 0o755\nc: 10\nd: yes\ne: on\nf: "0644"\ng: 0\n',
    );
    expect(documents[0]?.value).toEqual({ a: 420, b: 493, c: 10, d: 'yes', e: 'on', f: '0644', g: 0 });
  });

  it('reports duplicate keys with their position, per document', () => {
    const parsed = parseYamlFile('f.yaml', 'a: 1\n---\nb: 1\nb: 2\n');
    expect(parsed.multiDocument).toBe(true);
    expect(parsed.documents.map((d) => d.index)).toEqual([1]);
    expect(parsed.diagnostics).toEqual([
      {
        code: 'yaml-syntax',
        file: 'f.yaml',
        document: 2,
        line: 4,
        column: 1,
        message: 'YAML syntax error: Map keys must be unique',
      },
    ]);
  });

  it('skips empty documents but keeps the numbering of the file', () => {
    const parsed = parseYamlFile('f.yaml', '---\n# comment only\n---\na: 1\n---\n');
    expect(parsed.documents.map((d) => [d.index, d.value])).toEqual([[2, { a: 1 }]]);
    expect(parsed.diagnostics).toEqual([]);
  });

  it('bounds alias expansion', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      bomb.push(
        `${'b'.repeat(i + 1)}: &${'b'.repeat(i + 1)} [${Array(10)
          .fill(`*${i === 0 ? 'a' : 'b'.repeat(i)}`)
          .join(', ')}]`,
      );
    const parsed = parseYamlFile('bomb.yaml', `${bomb.join('\n')}\n`);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics[0]?.code).toBe('yaml-too-complex');
  });

  it('locates keys, values, sequence items, and falls back to the nearest parent', () => {
    const text = 'spec:\n  changes:\n  - type: Patch\n    target: {kind: ConfigMap}\n';
    const [doc] = parseYamlFile('f.yaml', text).documents;
    expect(doc?.locate(['spec', 'changes', 0, 'type'])).toEqual({ line: 3, column: 11 });
    expect(doc?.locate(['spec', 'changes', 0, 'type'], 'key')).toEqual({ line: 3, column: 5 });
    expect(doc?.locate(['spec', 'changes', 0, 'target', 'kind'])).toEqual({ line: 4, column: 20 });
    expect(doc?.locate(['spec', 'changes', 0, 'target', 'name'])).toEqual({ line: 4, column: 13 });
    expect(doc?.locate(['spec', 'changes', 5])).toEqual({ line: 3, column: 3 });
  });
});
