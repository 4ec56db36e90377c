import { describe, expect, it } from 'vitest';
import { parseObjects } from '../../../src/render/output.ts';

describe("a tool's output read as objects", () => {
  it('drops empty documents and unpacks a v1 List', () => {
    const text =
      '---\n# Source: c/templates/a.yaml\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n' +
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n- null\n';
    const parsed = parseObjects("helm's output", text);
    expect(parsed.ok && parsed.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/a',
      'Secret/b',
    ]);
  });

  it.each([
    ['kind: ConfigMap\nmetadata: {name: a}\n', 'a ConfigMap without apiVersion'],
    ['apiVersion: v1\nmetadata: {name: a}\n', 'an object without kind'],
    ['apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n', 'a ConfigMap without metadata.name'],
    ['apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ""}\n', 'a ConfigMap without metadata.name'],
    ['- just\n- a list\n', 'not an object (a mapping)'],
  ])('names the document of an object it cannot apply: %j', (doc, problem) => {
    const parsed = parseObjects(
      "kustomize's output",
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n${doc}`,
    );
    expect(parsed).toMatchObject({
      ok: false,
      message: `kustomize's output, document 2: ${problem}`,
      line: 5,
    });
  });

  it('reports YAML that does not parse, or breaks the parser’s bounds, with its line', () => {
    expect(parseObjects('x.yaml', 'a: [\n')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^x\.yaml:\d+:\d+: YAML syntax error/),
    });
    expect(parseObjects('x.yaml', `${'['.repeat(200)}\n`)).toMatchObject({
      ok: false,
      message: expect.stringContaining('nested more than 100 levels'),
    });
  });
});
