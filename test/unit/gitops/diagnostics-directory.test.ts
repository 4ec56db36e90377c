import { describe, expect, it } from 'vitest';
import { repositoryPolicy } from '../../../src/gitops/index.ts';
import { at, configMap, diagnose, header, OPTIONS } from './diagnose.ts';

const TEAM_A = repositoryPolicy({
  defaultNamespace: 'default',
  allowedNamespaces: 'team-a',
  allowedServiceAccounts: 'deploy-sa',
});

describe('diagnostics about the directory', () => {
  it('lists unknown files with a hint, and refuses subdirectories', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.patch.yaml': configMap,
      'README.md': '# notes',
      '20-b.patch.yml': configMap,
      'nested/30-c.patch.yaml': configMap,
    });
    expect(diagnostics.map((d) => [d.code, d.file.split('/').slice(2).join('/')])).toEqual([
      ['unknown-file', '20-b.patch.yml'],
      ['unknown-file', 'README.md'],
      ['unknown-file', 'nested'],
    ]);
    expect(diagnostics[0]?.message).toContain('rename it to 20-b.patch.yaml');
    expect(diagnostics[2]?.message).toBe('subdirectories are not allowed in a transaction directory');
  });

  it('requires transaction.yaml', async () => {
    const diagnostics = await diagnose({ '10-a.patch.yaml': configMap });
    expect(diagnostics).toEqual([at('transaction.yaml', { code: 'missing-transaction-file' })]);
  });

  it('enforces the namespace allow-list, for an explicit and for the default namespace', async () => {
    const options = { policy: TEAM_A };
    const explicit = await diagnose(
      { 'transaction.yaml': header('deploy-v2', '  namespace: prod\n'), '10-a.patch.yaml': configMap },
      options,
    );
    expect(explicit).toEqual([
      at('transaction.yaml', {
        code: 'namespace-not-allowed',
        field: 'metadata.namespace',
        line: 5,
        column: 14,
      }),
    ]);
    expect(explicit[0]?.message).toBe(
      'namespace "prod" is not allowed for this repository ' +
        '(allowed: team-a; set by --allowed-namespaces or JANUS_ALLOWED_NAMESPACES)',
    );
    const defaulted = await diagnose({ 'transaction.yaml': header(), '10-a.patch.yaml': configMap }, options);
    expect(defaulted[0]?.message).toBe(
      'the default namespace "default" is not allowed for this repository ' +
        '(allowed: team-a; set by --allowed-namespaces or JANUS_ALLOWED_NAMESPACES)',
    );
  });

  it('reports an invalid namespace once, not also as outside the allow-list', async () => {
    const options = { policy: TEAM_A };
    const diagnostics = await diagnose(
      { 'transaction.yaml': header('deploy-v2', '  namespace: Team_A\n'), '10-a.patch.yaml': configMap },
      options,
    );
    expect(diagnostics).toEqual([
      at('transaction.yaml', { code: 'invalid-value', field: 'metadata.namespace', line: 5 }),
    ]);
  });

  it('reports an empty transaction.yaml', async () => {
    const diagnostics = await diagnose({ 'transaction.yaml': '# to do\n', '10-a.patch.yaml': configMap });
    expect(diagnostics).toEqual([
      at('transaction.yaml', {
        code: 'not-a-mapping',
        message: 'the file is empty; it must hold a Transaction',
      }),
    ]);
  });

  it('enforces size and count limits', async () => {
    const limits = { maxFileBytes: 200, maxTotalBytes: 400, maxChanges: 2, maxEntries: 4 };
    const big = `${configMap}data:\n  blob: "${'x'.repeat(300)}"\n`;
    const tooLarge = await diagnose(
      { 'transaction.yaml': header(), '10-a.patch.yaml': big },
      { ...OPTIONS, limits },
    );
    expect(tooLarge).toEqual([at('10-a.patch.yaml', { code: 'file-too-large' })]);
    expect(tooLarge[0]?.message).toBe(`the file is ${big.length} bytes; the limit is 200 bytes per file`);
    const three = ['a', 'b', 'c']
      .map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}}\n`)
      .join('---\n');
    expect(
      await diagnose({ 'transaction.yaml': header(), '10-a.patch.yaml': three }, { ...OPTIONS, limits }),
    ).toEqual([expect.objectContaining({ code: 'too-many-changes', file: 'transactions/deploy-v2' })]);
    const files = Object.fromEntries(['10', '20', '30', '40'].map((n) => [`${n}-a.patch.yaml`, configMap]));
    expect(await diagnose({ 'transaction.yaml': header(), ...files }, { ...OPTIONS, limits })).toEqual([
      expect.objectContaining({ code: 'too-many-files', file: 'transactions/deploy-v2' }),
    ]);
    const medium = `${configMap}data:\n  blob: "${'x'.repeat(120)}"\n`;
    const tooMuch = { '10-a.patch.yaml': medium, '20-b.patch.yaml': medium.replace('cfg', 'cfg2') };
    expect(
      await diagnose({ 'transaction.yaml': header(), ...tooMuch }, { ...OPTIONS, limits }),
    ).toContainEqual(
      expect.objectContaining({ code: 'directory-too-large', file: 'transactions/deploy-v2' }),
    );
  });

  it('refuses files that are not UTF-8 text', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.patch.yaml': new Uint8Array([0xff, 0xfe, 0x00]),
    });
    expect(diagnostics).toEqual([at('10-a.patch.yaml', { code: 'unreadable-file' })]);
  });

  it('reports every problem at once, across files, in file order', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header('other'),
      '10-a.patch.yaml': 'kind: ConfigMap\n',
      'notes.txt': '',
    });
    expect(diagnostics.map((d) => d.code)).toEqual([
      'missing-field',
      'missing-field',
      'unknown-file',
      'name-mismatch',
    ]);
  });
});
