import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Diagnostic } from '../../../src/gitops/index.ts';
import {
  formatCommitMessage,
  parseTrailers,
  renderIgnoredEdit,
  renderRejection,
  resultPath,
  sourceCommit,
} from '../../../src/results/index.ts';

const SHA = 'c'.repeat(40);
const CONTEXT = { controllerVersion: '0.1.0', identity: 'janus-0' };
const DIR = {
  namespace: 'team-a',
  name: 'broken',
  source: {
    repository: 'https://git.example.com/p.git',
    revision: `main@sha1:${SHA}`,
    path: 'transactions/broken',
  },
};

describe("renderRejection of a directory filed as the repository's", () => {
  it("is recorded under the controller's namespace, saying which namespace it named", () => {
    const record = renderRejection(
      { ...DIR, namespace: 'janus-system', refusedNamespace: 'bob' },
      [{ code: 'namespace-not-allowed', file: 'transactions/broken/transaction.yaml', message: 'no' }],
      CONTEXT,
    );
    expect(Object.keys(record.files)).toEqual(['results/janus-system/broken.yaml']);
    const doc = parse(Object.values(record.files)[0] ?? '');
    expect(doc.transaction).toEqual({ namespace: 'janus-system', name: 'broken' });
    expect(doc.message).toBe(
      "the directory is invalid; nothing was applied (recorded as the repository's: its namespace bob is one this repository may not use)",
    );
    expect(parseTrailers(record.message)['Janus-Transaction']).toBe('janus-system/broken');
    expect(record.message).toContain("under the controller's namespace janus-system");
  });
});

describe('renderRejection', () => {
  const diagnostics: Diagnostic[] = [
    {
      code: 'yaml-syntax',
      file: 'transactions/broken/transaction.yaml',
      line: 7,
      column: 3,
      message: 'YAML syntax error: x',
    },
    {
      code: 'invalid-value',
      file: 'transactions/broken/10-a.patch.yaml',
      document: 2,
      line: 4,
      column: 9,
      field: 'metadata.name',
      message: 'must be a DNS-1123 subdomain',
    },
  ];

  it('records every diagnostic with file, document, line, column and field', () => {
    const record = renderRejection(DIR, diagnostics, CONTEXT);
    const document = parse(record.files['results/team-a/broken.yaml'] ?? '');
    expect(document).toMatchObject({
      kind: 'TransactionResult',
      phase: 'Rejected',
      transaction: { namespace: 'team-a', name: 'broken' },
    });
    expect(document.source).toEqual(DIR.source);
    expect(document.errors).toEqual([
      {
        file: 'transactions/broken/transaction.yaml',
        line: 7,
        column: 3,
        code: 'yaml-syntax',
        message: 'YAML syntax error: x',
      },
      {
        file: 'transactions/broken/10-a.patch.yaml',
        document: 2,
        line: 4,
        column: 9,
        field: 'metadata.name',
        code: 'invalid-value',
        message: 'must be a DNS-1123 subdomain',
      },
    ]);
  });

  it('says Rejected with the error count, lists errors in the body, and carries the trailers', () => {
    const { message } = renderRejection(DIR, diagnostics, CONTEXT);
    expect(message.split('\n')[0]).toBe('team-a/broken: Rejected (2 errors)');
    expect(message).toContain(
      'transactions/broken/10-a.patch.yaml:4:9 (document 2): metadata.name: must be a DNS-1123 subdomain',
    );
    expect(parseTrailers(message)).toEqual({
      'Janus-Transaction': 'team-a/broken',
      'Janus-Phase': 'Rejected',
      'Janus-Source': SHA,
    });
  });

  it('keeps the commit body short when there are many errors', () => {
    const many = Array.from(
      { length: 30 },
      (_, i): Diagnostic => ({ code: 'unknown-file', file: `f${i}`, message: 'x' }),
    );
    const { message } = renderRejection(DIR, many, CONTEXT);
    expect(message).toContain('… and 10 more');
    expect(message).not.toContain('f25');
  });
});

describe('renderIgnoredEdit', () => {
  it('is a notice (no file) that names the edit and what to do instead', () => {
    const record = renderIgnoredEdit(DIR, ['transactions/broken/20-b.patch.yaml']);
    expect(record.files).toEqual({});
    expect(record.message.split('\n')[0]).toBe('team-a/broken: edit ignored (already materialized)');
    expect(record.message).toContain(`transactions/broken changed in ${SHA} after it was materialized`);
    expect(record.message).toContain('  transactions/broken/20-b.patch.yaml');
    expect(parseTrailers(record.message)['Janus-Phase']).toBe('Ignored');
  });
});

describe('commit messages and paths', () => {
  it('cannot be broken by newlines in values', () => {
    const message = formatCommitMessage('ns/x: Failed\nJanus-Phase: Committed', ['body'], {
      transaction: 'ns/x',
      phase: 'Failed\nJanus-Phase: Committed',
    });
    expect(message.split('\n')[0]).toBe('ns/x: Failed Janus-Phase: Committed');
    expect(parseTrailers(message)).toEqual({
      'Janus-Transaction': 'ns/x',
      'Janus-Phase': 'Failed Janus-Phase: Committed',
    });
  });

  it('extracts the commit from a revision', () => {
    expect(sourceCommit(`main@sha1:${SHA}`)).toBe(SHA);
    expect(sourceCommit(`release/1.0@sha1:${SHA}`)).toBe(SHA);
    expect(sourceCommit(SHA)).toBe(SHA);
    expect(sourceCommit('main')).toBeUndefined();
    expect(sourceCommit(undefined)).toBeUndefined();
  });

  it('keeps result paths inside results/', () => {
    expect(resultPath('default', 'deploy-v2')).toBe('results/default/deploy-v2.yaml');
    expect(resultPath('..', '../x')).toBe('results/_../.._x.yaml');
    expect(resultPath('default', '.git')).toBe('results/default/_.git.yaml');
  });
});

describe('renderRejection of a directory whose commits are not signed (--verify-signatures)', () => {
  const unsigned: Diagnostic = {
    code: 'commit-signature',
    file: 'transactions/broken',
    message: `commit ${SHA}: the commit is not signed`,
  };
  const message = (diagnostics: Diagnostic[]) =>
    parse(renderRejection(DIR, diagnostics, CONTEXT).files['results/team-a/broken.yaml'] ?? '').message;

  it('says so, naming the commit in the error, and says both when the directory is invalid too', () => {
    expect(message([unsigned])).toBe(
      'a commit that made the directory is not signed by an allowed signer; nothing was applied',
    );
    expect(renderRejection(DIR, [unsigned], CONTEXT).message).toContain(`the commit is not signed`);
    expect(
      message([
        unsigned,
        { code: 'yaml-syntax', file: 'transactions/broken/transaction.yaml', message: 'x' },
      ]),
    ).toBe('the directory is invalid, and not signed by an allowed signer; nothing was applied');
    expect(
      message([{ code: 'yaml-syntax', file: 'transactions/broken/transaction.yaml', message: 'x' }]),
    ).toBe('the directory is invalid; nothing was applied');
  });
});
