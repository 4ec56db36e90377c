/**
 * `git log` on the results branch reads as the audit trail of a realistic day: an apply, a
 * rejected pull request, an edit that was ignored, a failed change rolled back, a requested
 * rollback. Set JANUS_AUDIT_LOG_OUT=<file> to keep the log (docs/git.md shows one).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, serviceAccount } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { git } from '../../support/git/git-server.ts';
import { janus as cli } from '../../support/processes/cli.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  RESULTS,
  type TestRepo,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'shop');
const server = useGitServer();
const janus = useJanus(clients);

async function until(repo: TestRepo, subject: string): Promise<void> {
  await eventually(
    async () => {
      const subjects = await repo.subjects();
      if (!subjects.includes(subject))
        throw new Error(`waiting for "${subject}"; so far:\n${subjects.join('\n')}`);
    },
    { timeoutMs: 90_000 },
  );
}

describe('the results branch', () => {
  it('reads as an audit trail', async () => {
    const shop = ns.name;
    await serviceAccount(clients.admin, shop, 'deployer', [ALL_ON_CONFIGMAPS]);
    for (const name of ['web-config', 'api-config', 'feature-flags', 'checkout-config', 'payments-config']) {
      await clients.admin.create(configMap(shop, name, { version: '1' }));
    }
    const repo = await createTestRepo(server.server);
    await janus.start({ repo: repo.url, namespace: shop });

    await repo.push(
      directory('deploy-v2', {
        changes: {
          '10-web.patch.yaml': configMapYaml('web-config', { version: '2' }),
          '20-api.patch.yaml': configMapYaml('api-config', { version: '2' }),
          '30-flags.patch.yaml': configMapYaml('feature-flags', { checkout: 'new' }),
        },
      }),
      'Merge pull request #12: deploy v2',
    );
    await until(repo, `${shop}/deploy-v2: Committed (3/3 changes)`);

    await repo.push(
      {
        'transactions/typo/transaction.yaml':
          'apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: typo\nspec:\n  serviceAcountName: deployer\n',
        'transactions/typo/10-web.patch.yaml': configMapYaml('web-config', { version: '3' }),
      },
      'Merge pull request #13: typo',
    );
    await until(repo, `${shop}/typo: Rejected (2 errors)`);

    await repo.push(
      { 'transactions/deploy-v2/20-api.patch.yaml': configMapYaml('api-config', { version: '2.1' }) },
      'Merge pull request #14: tweak deploy-v2 after the fact',
    );
    await until(repo, `${shop}/deploy-v2: edit ignored (already materialized)`);

    const removePolicy = await failAtCommit(clients.admin, shop, 'payments-config');
    try {
      await repo.push(
        directory('payments-v3', {
          changes: {
            '10-checkout.patch.yaml': configMapYaml('checkout-config', { payments: 'v3' }),
            '20-payments.patch.yaml': configMapYaml('payments-config', { version: '3' }),
          },
        }),
        'Merge pull request #15: payments v3',
      );
      await until(repo, `${shop}/payments-v3: RolledBack (1/1 changes rolled back)`);
    } finally {
      await removePolicy();
    }

    await repo.push(
      { 'transactions/deploy-v2/ROLLBACK': 'checkout errors up 4x since deploy-v2 (INC-2291)\n' },
      'Roll back deploy-v2',
    );
    await until(repo, `${shop}/deploy-v2: RolledBack (3/3 changes rolled back)`);

    expect(await repo.subjects()).toEqual([
      `${shop}/deploy-v2: Pending (materialized, 3 changes)`,
      `${shop}/deploy-v2: Committed (3/3 changes)`,
      `${shop}/typo: Rejected (2 errors)`,
      `${shop}/deploy-v2: edit ignored (already materialized)`,
      `${shop}/payments-v3: Pending (materialized, 2 changes)`,
      `${shop}/payments-v3: RollingBack (undoing 1/2 committed changes)`,
      `${shop}/payments-v3: RolledBack (1/1 changes rolled back)`,
      `${shop}/deploy-v2: RollingBack (undoing 3/3 committed changes)`,
      `${shop}/deploy-v2: RolledBack (3/3 changes rolled back)`,
    ]);
    const history = await expectHistory(repo, shop);
    const out = process.env.JANUS_AUDIT_LOG_OUT;
    if (out) {
      await writeFile(`${out}.history`, history);
      const log = await git(repo.bare, 'log', '--stat', RESULTS);
      const file = await git(repo.bare, 'show', `${RESULTS}:results/${shop}/payments-v3.yaml`);
      await writeFile(out, `${log}\n\n=== results/${shop}/payments-v3.yaml ===\n${file}\n`);
    }
  });
});

/** `janus history` reads the same trail back as a table, from the server and from a clone. */
async function expectHistory(repo: TestRepo, shop: string): Promise<string> {
  const table = await cli([
    'history',
    '--repo',
    repo.url,
    '--cache-dir',
    await mkdtemp(join(tmpdir(), 'janus-h-')),
  ]);
  expect(table.code, table.stderr).toBe(0);
  const rows = table.stderr.trim().split('\n');
  expect(rows[0]).toMatch(/^RECORDED\s+TRANSACTION\s+PHASE\s+DETAIL\s+SOURCE\s+RECORD$/);
  expect(rows.slice(1).map((r) => r.split(/\s{2,}/).slice(1, 3))).toEqual([
    [`${shop}/deploy-v2`, 'Pending'],
    [`${shop}/deploy-v2`, 'Committed'],
    [`${shop}/typo`, 'Rejected'],
    [`${shop}/deploy-v2`, 'Ignored'],
    [`${shop}/payments-v3`, 'Pending'],
    [`${shop}/payments-v3`, 'RollingBack'],
    [`${shop}/payments-v3`, 'RolledBack'],
    [`${shop}/deploy-v2`, 'RollingBack'],
    [`${shop}/deploy-v2`, 'RolledBack'],
  ]);
  expect(rows[2]).toMatch(/\s3\/3 changes\s+[0-9a-f]{12}\s+[0-9a-f]{12}$/);

  // In a clone the results branch is origin/janus/results; filtered by name, newest two, as JSON.
  const clone = await mkdtemp(join(tmpdir(), 'janus-clone-'));
  await git(clone, 'clone', '--quiet', repo.bare, '.');
  const json = await cli(['history', 'deploy-v2', '--limit', '2', '-o', 'json'], { cwd: clone });
  expect(json.code, json.stderr).toBe(0);
  const doc = JSON.parse(json.stdout);
  expect(doc.branch).toBe(`origin/${RESULTS}`);
  expect(doc.entries.map((e: { phase: string }) => e.phase)).toEqual(['RollingBack', 'RolledBack']);
  expect(doc.entries[1]).toMatchObject({
    transaction: `${shop}/deploy-v2`,
    detail: '3/3 changes rolled back',
    source: expect.stringMatching(/^[0-9a-f]{40}$/),
    record: await git(repo.bare, 'rev-parse', RESULTS).then((s) => s.trim()),
  });
  const none = await cli(['history', 'nothing-here'], { cwd: clone });
  expect(none.stderr).toContain(`Nothing recorded on origin/${RESULTS} for nothing-here`);
  return table.stderr;
}
