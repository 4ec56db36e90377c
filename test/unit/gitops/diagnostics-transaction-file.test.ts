import { describe, expect, it } from 'vitest';
import { at, configMap, diagnose, header, OPTIONS } from './diagnose.ts';

describe('diagnostics in transaction.yaml', () => {
  it('locates a YAML syntax error by line and column', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': `${header()}  changes: [\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics).toContainEqual(at('transaction.yaml', { code: 'yaml-syntax', line: 8 }));
  });

  it('names a missing required field, at its parent', async () => {
    const text =
      'apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: deploy-v2\nspec:\n  lockTimeout: 1m\n';
    const diagnostics = await diagnose({ 'transaction.yaml': text, '10-a.delete.yaml': configMap });
    expect(diagnostics).toEqual([
      at('transaction.yaml', {
        code: 'missing-field',
        field: 'spec.serviceAccountName',
        message: 'is required',
        line: 6,
        column: 3,
      }),
    ]);
  });

  it('points an unknown field at its key and lists the allowed ones', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': `${header()}  retries: 3\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'unknown-field', field: 'spec.retries', line: 7, column: 3 }),
    ]);
    expect(diagnostics[0]?.message).toContain(
      'allowed: serviceAccountName, lockTimeout, timeout, health, changes',
    );
  });

  it('rejects another kind or apiVersion', async () => {
    const text = header()
      .replace('kind: Transaction', 'kind: Deployment')
      .replace('tx.janus.io/v1alpha1', 'apps/v1');
    const diagnostics = await diagnose({ 'transaction.yaml': text, '10-a.delete.yaml': configMap });
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'wrong-kind', field: 'apiVersion', line: 1, column: 13 }),
      at('transaction.yaml', { code: 'wrong-kind', field: 'kind', line: 2, column: 7 }),
    ]);
  });

  it('requires metadata.name to equal the directory name', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header('deploy-v3'),
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'name-mismatch', field: 'metadata.name', line: 4, column: 9 }),
    ]);
    expect(diagnostics[0]?.message).toBe('must equal the directory name "deploy-v2"');
  });

  it('rejects a directory name that is not a DNS-1123 label', async () => {
    const diagnostics = await diagnose(
      { 'transaction.yaml': header('Deploy_V2'), '10-a.delete.yaml': configMap },
      OPTIONS,
      'Deploy_V2',
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'invalid-directory-name', file: 'transactions/Deploy_V2' }),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        code: 'invalid-value',
        field: 'metadata.name',
        file: 'transactions/Deploy_V2/transaction.yaml',
      }),
    );
  });

  it('rejects bad durations and durations under one second', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': `${header()}  lockTimeout: 5 minutes\n  timeout: 500ms\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'invalid-value', field: 'spec.lockTimeout', line: 7, column: 16 }),
      at('transaction.yaml', { code: 'invalid-value', field: 'spec.timeout', line: 8, column: 12 }),
    ]);
    expect(diagnostics[1]?.message).toBe('must be at least 1s, found "500ms"');
  });

  it("rejects durations above the CRD's bounds: lockTimeout 1h, timeout 24h", async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': `${header()}  lockTimeout: 61m\n  timeout: 25h\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'invalid-value', field: 'spec.lockTimeout', line: 7, column: 16 }),
      at('transaction.yaml', { code: 'invalid-value', field: 'spec.timeout', line: 8, column: 12 }),
    ]);
    expect(diagnostics.map((d) => d.message)).toEqual([
      'must be at most 1h, found "61m"',
      'must be at most 24h, found "25h"',
    ]);
  });

  it('checks spec.health: targets one of Auto, All, None; timeout a duration up to 1h', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': `${header()}  health:\n    targets: Some\n    timeout: 2h\n    grace: 1m\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics.map((d) => [d.field, d.message])).toEqual(
      expect.arrayContaining([
        ['spec.health.grace', expect.stringContaining('targets, timeout')],
        ['spec.health.targets', 'must be one of Auto, All, None, found "Some"'],
        ['spec.health.timeout', 'must be at most 1h, found "2h"'],
      ]),
    );
    expect(diagnostics).toHaveLength(3);
  });

  it('checks spec.health.stableFor: a duration from 0s to 1h, less than spec.timeout', async () => {
    const tooLong = await diagnose({
      'transaction.yaml': `${header()}  health:\n    stableFor: 2h\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(tooLong.map((d) => [d.field, d.message])).toEqual([
      ['spec.health.stableFor', 'must be at most 1h, found "2h"'],
    ]);
    const pastTimeout = await diagnose({
      'transaction.yaml': `${header()}  timeout: 1m\n  health:\n    stableFor: 1m\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(pastTimeout.map((d) => [d.field, d.message])).toEqual([
      [
        'spec.health.stableFor',
        'must be less than spec.timeout (1m): the bake window must fit in the transaction',
      ],
    ]);
  });

  it('refuses spec.health.analysis without a bake window to measure it in', async () => {
    const analysis = '    analysis:\n      - templateRef: {name: error-rate}\n';
    for (const window of ['', '    stableFor: 0s\n']) {
      const diagnostics = await diagnose({
        'transaction.yaml': `${header()}  health:\n${window}${analysis}`,
        '10-a.delete.yaml': configMap,
      });
      expect(diagnostics.map((d) => [d.field, d.message])).toEqual([
        [
          'spec.health.analysis',
          'needs spec.health.stableFor > 0s: the checks are measured during the bake window',
        ],
      ]);
    }
    const both = await diagnose({
      'transaction.yaml': `${header()}  health:\n    stableFor: 1m\n    analysis:\n      - {templateRef: {name: a}, check: {name: b}}\n`,
      '10-a.delete.yaml': configMap,
    });
    expect(both.map((d) => [d.field, d.message])).toEqual([
      ['spec.health.analysis.0', 'an analysis item has exactly one of templateRef or check'],
    ]);
  });

  it('reserves tx.janus.io/ annotations', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header('deploy-v2', '  annotations:\n    tx.janus.io/source-path: forged\n'),
      '10-a.delete.yaml': configMap,
    });
    expect(diagnostics).toEqual([
      at('transaction.yaml', {
        code: 'invalid-value',
        field: 'metadata.annotations.tx.janus.io/source-path',
        line: 6,
      }),
    ]);
  });

  it('checks inline changes: type, content rules, and content agreeing with the target', async () => {
    const text = `${header()}  changes:
  - target: {apiVersion: v1, kind: ConfigMap, name: a}
    type: patch
    content: {data: {}}
  - target: {apiVersion: v1, kind: ConfigMap, name: b}
    type: Delete
    content: {data: {}}
  - target: {apiVersion: v1, kind: ConfigMap, name: c}
    type: Create
  - target: {apiVersion: v1, kind: ConfigMap, name: d}
    type: Update
    content: {apiVersion: v1, kind: ConfigMap, metadata: {name: e}}
`;
    const diagnostics = await diagnose({ 'transaction.yaml': text });
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'invalid-value', field: 'spec.changes[0].type', line: 9 }),
      at('transaction.yaml', {
        code: 'invalid-value',
        field: 'spec.changes[1].content',
        line: 13,
        column: 5,
      }),
      at('transaction.yaml', { code: 'missing-field', field: 'spec.changes[2].content', line: 14 }),
      at('transaction.yaml', {
        code: 'invalid-value',
        field: 'spec.changes[3].content.metadata.name',
        line: 18,
        column: 65,
      }),
    ]);
    expect(diagnostics[0]?.message).toContain('did you mean Patch?');
    expect(diagnostics[3]?.message).toBe('is "e" but the target says "d"');
  });

  it("refuses an Apply change and a sourceRef: a source's, never a directory's", async () => {
    const text = `${header()}  sourceRef: {name: shop}
  changes:
  - target: {apiVersion: v1, kind: ConfigMap, name: a}
    type: Apply
    content: {data: {}}
`;
    const diagnostics = await diagnose({ 'transaction.yaml': text });
    expect(diagnostics.map((d) => [d.code, d.field])).toEqual([
      ['unknown-field', 'spec.sourceRef'],
      ['invalid-value', 'spec.changes[0].type'],
    ]);
    expect(diagnostics[1]?.message).toBe(
      'must be one of Create, Update, Patch, Delete, found the string "Apply" (Apply changes are made by sources, from a render: docs/sources.md)',
    );
  });

  it('reports a transaction with no changes at all', async () => {
    const diagnostics = await diagnose({ 'transaction.yaml': header() });
    expect(diagnostics).toEqual([at('transaction.yaml', { code: 'no-changes' })]);
  });
});
