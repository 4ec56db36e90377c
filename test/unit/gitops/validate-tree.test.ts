import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repositoryPolicy, validateTree } from '../../../src/gitops/index.ts';

const OPTIONS = { policy: repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'sa' }) };
const header = (name: string) =>
  `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}\nspec:\n  serviceAccountName: sa\n`;
const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n';

let repo: string;

async function write(files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
  }
}

beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), 'janus-validate-'));
  await write({
    'transactions/good/transaction.yaml': header('good'),
    'transactions/good/10-cfg.patch.yaml': configMap,
    'transactions/bad/transaction.yaml': header('bad'),
    'transactions/bad/10-cfg.patch.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n',
    'transactions/README.md': 'files directly under transactions/ are not transactions',
  });
});

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('validateTree', () => {
  it('validates every directory under <repo>/transactions, with paths relative to the repo', async () => {
    const result = await validateTree(repo, OPTIONS);
    expect(result.ok).toBe(false);
    expect(result.directories.map((d) => [d.path, d.ok])).toEqual([
      ['transactions/bad', false],
      ['transactions/good', true],
    ]);
    expect(result.directories[0]?.diagnostics).toEqual([
      expect.objectContaining({
        file: 'transactions/bad/10-cfg.patch.yaml',
        line: 4,
        column: 9,
        field: 'metadata.name',
      }),
    ]);
  });

  it('validates a single transaction directory', async () => {
    const result = await validateTree(join(repo, 'transactions', 'good'), OPTIONS);
    expect(result).toEqual({
      ok: true,
      directories: [{ path: 'good', ok: true, diagnostics: [] }],
      diagnostics: [],
    });
  });

  it('validates the transactions folder itself', async () => {
    const result = await validateTree(join(repo, 'transactions'), OPTIONS);
    expect(result.directories.map((d) => d.path)).toEqual(['bad', 'good']);
  });

  it('honours a custom transactions root', async () => {
    await write({
      'deploy/txns/x/transaction.yaml': header('x'),
      'deploy/txns/x/10-a.delete.yaml': configMap,
    });
    const result = await validateTree(repo, { ...OPTIONS, transactionsRoot: 'deploy/txns' });
    expect(result).toMatchObject({ ok: true, directories: [{ path: 'deploy/txns/x', ok: true }] });
  });

  it('fails clearly when there is nothing to validate', async () => {
    const empty = join(repo, 'empty');
    await mkdir(empty);
    const result = await validateTree(empty, OPTIONS);
    expect(result.ok).toBe(false);
    expect(result.diagnostics[0]?.message).toBe(
      'nothing to validate: neither transaction.yaml nor a transactions/ folder is there',
    );
  });

  it('reports symbolic links instead of following them', async () => {
    await symlink(
      join(repo, 'transactions/good/10-cfg.patch.yaml'),
      join(repo, 'transactions/good/20-link.patch.yaml'),
    );
    const result = await validateTree(join(repo, 'transactions', 'good'), OPTIONS);
    expect(result.directories[0]?.diagnostics).toEqual([
      expect.objectContaining({
        code: 'unknown-file',
        file: 'good/20-link.patch.yaml',
        message: expect.stringContaining('symbolic links'),
      }),
    ]);
  });
});
