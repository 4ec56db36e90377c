import { describe, expect, it } from 'vitest';
import { classifyFile } from '../../../src/gitops/file-names.ts';
import { dnsLabelProblem, dnsSubdomainProblem, groupOf, parseDuration } from '../../../src/gitops/names.ts';
import { compareCodeUnits } from '../../../src/text/order.ts';
import { formatDiagnostic } from '../../../src/yaml/diagnostic.ts';

describe('names', () => {
  it('accepts DNS-1123 labels of at most 63 characters', () => {
    expect(dnsLabelProblem('deploy-v2')).toBeUndefined();
    expect(dnsLabelProblem('a'.repeat(63))).toBeUndefined();
    expect(dnsLabelProblem('a'.repeat(64))).toBe('must be at most 63 characters (has 64)');
    for (const bad of ['Deploy', '-a', 'a-', 'a.b', 'a_b', ''])
      expect(dnsLabelProblem(bad)).toMatch(/DNS-1123 label/);
  });

  it('accepts DNS-1123 subdomains for object names', () => {
    expect(dnsSubdomainProblem('web.example-1')).toBeUndefined();
    expect(dnsSubdomainProblem('web..x')).toMatch(/DNS-1123 subdomain/);
  });

  it('parses Go durations', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5')).toBeUndefined();
    expect(parseDuration('5 m')).toBeUndefined();
  });

  it('finds the API group of an apiVersion', () => {
    expect(groupOf('v1')).toBe('');
    expect(groupOf('apps/v1')).toBe('apps');
  });
});

describe('file names', () => {
  it('classifies the files of a transaction directory', () => {
    expect(classifyFile('transaction.yaml')).toEqual({ role: 'transaction' });
    expect(classifyFile('ROLLBACK')).toEqual({ role: 'rollback' });
    expect(classifyFile('10-config.patch.yaml')).toEqual({ role: 'change', type: 'Patch', sops: false });
    expect(classifyFile('old.key.delete.yaml')).toEqual({ role: 'change', type: 'Delete', sops: false });
    expect(classifyFile('a.create.yaml')).toEqual({ role: 'change', type: 'Create', sops: false });
    expect(classifyFile('10-x.update.yaml')).toEqual({ role: 'change', type: 'Update', sops: false });
    expect(classifyFile('10-creds.update.sops.yaml')).toEqual({ role: 'change', type: 'Update', sops: true });
  });

  it('explains what an unknown name should be', () => {
    expect(classifyFile('transaction.yml')).toEqual({
      role: 'unknown',
      hint: 'rename it to transaction.yaml',
    });
    expect(classifyFile('rollback')).toMatchObject({
      hint: expect.stringContaining('ROLLBACK (upper case)'),
    });
    expect(classifyFile('10-a.Patch.yaml')).toMatchObject({
      hint: 'the change type is lower case: 10-a.patch.yaml',
    });
    expect(classifyFile('10-a.apply.yaml')).toMatchObject({
      role: 'unknown',
      hint: expect.stringContaining('<order>-<name>'),
    });
    expect(classifyFile('.patch.yaml')).toMatchObject({ role: 'unknown' });
  });

  it('orders names by code unit, whatever the locale', () => {
    expect(
      ['b.patch.yaml', 'B.patch.yaml', '10-a.patch.yaml', '9-a.patch.yaml'].sort(compareCodeUnits),
    ).toEqual(['10-a.patch.yaml', '9-a.patch.yaml', 'B.patch.yaml', 'b.patch.yaml']);
  });
});

describe('formatDiagnostic', () => {
  it('prints file:line:column, the document, the field and the message', () => {
    expect(
      formatDiagnostic({
        code: 'invalid-value',
        file: 'transactions/x/10-a.patch.yaml',
        document: 2,
        line: 3,
        column: 9,
        field: 'metadata.name',
        message: 'is bad',
      }),
    ).toBe('transactions/x/10-a.patch.yaml:3:9 (document 2): metadata.name: is bad');
    expect(
      formatDiagnostic({ code: 'unknown-file', file: 'transactions/x/README', message: 'unexpected file' }),
    ).toBe('transactions/x/README: unexpected file');
  });
});
