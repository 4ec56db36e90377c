import { describe, expect, it } from 'vitest';
import { memoryReader, parseTransactionDirectory } from '../../../src/gitops/index.ts';
import { at, configMap, diagnose, header, OPTIONS } from './diagnose.ts';

describe('diagnostics in change files', () => {
  it('names the document of a multi-document file', async () => {
    const text = `${configMap}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_Valid\n`;
    const diagnostics = await diagnose({ 'transaction.yaml': header(), '10-cfg.update.yaml': text });
    expect(diagnostics).toEqual([
      at('10-cfg.update.yaml', {
        code: 'invalid-value',
        document: 2,
        field: 'metadata.name',
        line: 9,
        column: 9,
      }),
    ]);
  });

  it('requires a mapping per document, and refuses Lists', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.create.yaml': '- just\n- a list\n',
      '20-b.create.yaml': 'apiVersion: v1\nkind: List\nitems: []\n',
    });
    expect(diagnostics).toEqual([
      at('10-a.create.yaml', { code: 'not-a-mapping', line: 1, column: 1 }),
      at('20-b.create.yaml', { code: 'invalid-value', field: 'kind', line: 2 }),
    ]);
  });

  it('requires apiVersion, kind and metadata.name, and refuses generateName', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.create.yaml': 'metadata: {labels: {a: b}}\n',
      '20-b.create.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\n',
    });
    expect(diagnostics.map((d) => `${d.file.split('/').pop()} ${d.code} ${d.field}`)).toEqual([
      '10-a.create.yaml missing-field apiVersion',
      '10-a.create.yaml missing-field kind',
      '10-a.create.yaml missing-field metadata.name',
      '20-b.create.yaml missing-field metadata.name',
    ]);
    expect(diagnostics[3]?.message).toBe('is required: generateName is not supported');
  });

  it('refuses a namespace on a known cluster-scoped kind', async () => {
    const text =
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: default}\n';
    const diagnostics = await diagnose({ 'transaction.yaml': header(), '10-r.delete.yaml': text });
    expect(diagnostics).toEqual([
      at('10-r.delete.yaml', { code: 'invalid-value', field: 'metadata.namespace', line: 3 }),
    ]);
  });

  it('finds duplicate targets after namespace defaulting, pointing at both places', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.patch.yaml': configMap,
      // Same ConfigMap: an explicit namespace equal to the default, and another API version spelling.
      '20-b.update.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: default\n',
    });
    expect(diagnostics).toEqual([
      at('20-b.update.yaml', { code: 'duplicate-target', field: 'metadata.name', line: 4, column: 9 }),
    ]);
    expect(diagnostics[0]?.message).toBe(
      'v1 ConfigMap default/cfg is already changed by transactions/deploy-v2/10-a.patch.yaml; ' +
        'each resource may appear in one change only',
    );
  });

  it('does not confuse targets in different namespaces', async () => {
    const result = await parseTransactionDirectory(
      memoryReader({
        't/x/transaction.yaml': header('x'),
        't/x/10-a.patch.yaml': configMap,
        't/x/20-b.patch.yaml': `${configMap}  namespace: other\n`,
      }),
      't/x',
      OPTIONS,
    );
    expect(result.ok).toBe(true);
  });

  it('reports a change file with no document', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.patch.yaml': '# nothing yet\n',
    });
    expect(diagnostics).toEqual([at('10-a.patch.yaml', { code: 'no-changes' })]);
  });
});
