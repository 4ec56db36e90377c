/**
 * `janus plan -o markdown --comment-on` against a real forge (Gitea, built from its Go module):
 * a pull request gets Janus's plan as a comment, and a second run (the next push) updates that
 * comment instead of adding one, leaving the reviewers' comments alone.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, testNamespace } from '../../support/cluster/saga.ts';
import { janus } from '../../support/processes/cli.ts';
import { GITEA_ADMIN, openPullRequest, type TestGitea, useGitea } from '../../support/servers/gitea.ts';

const clients = useClients();
const forge = useGitea();

/** The pull request's checkout as the CI job sees it: one transaction setting mode to `mode`. */
async function checkout(root: string, ns: string, mode: string): Promise<void> {
  const dir = join(root, 'transactions', 'release');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'transaction.yaml'),
    'apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: release\nspec:\n  serviceAccountName: deployer\n',
  );
  await writeFile(
    join(dir, '10-settings.patch.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  mode: ${mode}\n`,
  );
}

/**
 * `janus plan` as a Gitea Actions job runs it in `cwd`: GITHUB_* variables, the admin's token
 * given to janus; `insecure` the setting for the test's plain http:// Gitea on the loopback.
 */
async function planJob(gitea: TestGitea, cwd: string, ns: string, repository: string, number: number) {
  const tokenFile = join(await mkdtemp(join(tmpdir(), 'janus-forge-token-')), 'token');
  await writeFile(tokenFile, `${gitea.token}\n`);
  return (insecure: Record<string, string> = { JANUS_ALLOW_INSECURE_HTTP: 'true' }) =>
    janus(['plan', '.', '-o', 'markdown', '--comment-on', String(number), '--forge-token-file', tokenFile], {
      cwd,
      kubeconfig: clients.kubeconfigs.admin,
      env: {
        JANUS_ROOT: 'transactions',
        JANUS_DEFAULT_NAMESPACE: ns,
        JANUS_ALLOWED_NAMESPACES: ns,
        JANUS_ALLOWED_SERVICE_ACCOUNTS: `${ns}/deployer`,
        GITEA_ACTIONS: 'true',
        GITHUB_REPOSITORY: repository,
        GITHUB_API_URL: `${gitea.url}/api/v1`,
        ...insecure,
      },
    });
}

describe('janus plan --comment-on, on a real forge (Gitea)', () => {
  it('posts the plan on the pull request, then updates that one comment on the next run', async () => {
    const ns = await testNamespace(clients.admin, 'plan-comment', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'settings', { mode: 'blue' }));
    const gitea = forge();
    const { repository, number } = await openPullRequest(gitea, `plan-comment-${ns}`);
    const comments = `/repos/${repository}/issues/${number}/comments`;
    await gitea.api('POST', comments, { body: 'LGTM once the plan is in' });
    const cwd = await mkdtemp(join(tmpdir(), 'janus-plan-comment-'));
    const run = await planJob(gitea, cwd, ns, repository, number);

    await checkout(cwd, ns, 'green');
    const refused = await run({});
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 2,
      stderr: `janus: --comment-on: the forge API ${gitea.url}/api/v1 is plain http:// and the token would cross the network in clear text. Use https://, or pass --allow-insecure-http on a network you trust\n`,
    });
    const first = await run();
    expect({ code: first.code, stderr: first.stderr }).toEqual({
      code: 1, // "would change", as without --comment-on
      stderr: `posted the plan on ${repository}#${number}\n`,
    });
    await checkout(cwd, ns, 'red');
    const second = await run();
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^updated the plan's comment \d+ on /);
    expect(second.stdout).toContain('+  mode: red');
    expect(second.stderr + second.stdout).not.toContain(gitea.token);

    const all = await gitea.api<{ body: string }[]>('GET', comments);
    const mine = all.filter((c) => c.body.includes('<!-- janus-plan . -->'));
    expect(all.length).toBe(2); // the reviewer's and Janus's
    expect(mine.length).toBe(1);
    expect(mine[0]?.body).toBe(`<!-- janus-plan . -->\n${second.stdout}`);
    expect(mine[0]?.body).toContain('-  mode: blue\n+  mode: red');
  });

  it("never adopts a commenter's comment that begins with the marker: the plan is posted as the token's own", async () => {
    const ns = await testNamespace(clients.admin, 'plan-adopt', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'settings', { mode: 'blue' }));
    const gitea = forge();
    const { repository, number } = await openPullRequest(gitea, `plan-adopt-${ns}`);
    const comments = `/repos/${repository}/issues/${number}/comments`;
    // Mallory may comment on the pull request: she posts first, a fake plan under the marker, to
    // have Janus's real plan written into her comment, which she may edit afterwards.
    const mallory = await gitea.createUser(`mallory-${ns.slice(-6)}`);
    const fake = '<!-- janus-plan . -->\n### Janus plan: ✅ no change\n';
    const planted = await mallory.api<{ id: number }>('POST', comments, { body: fake });
    const cwd = await mkdtemp(join(tmpdir(), 'janus-plan-comment-'));
    await checkout(cwd, ns, 'green');
    const result = await (await planJob(gitea, cwd, ns, repository, number))();
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 1,
      stderr: `posted the plan on ${repository}#${number}\n`,
    });
    const all = await gitea.api<{ id: number; body: string; user: { login: string } }[]>('GET', comments);
    expect(all.find((c) => c.id === planted.id)?.body).toBe(fake);
    const mine = all.filter((c) => c.user.login === GITEA_ADMIN);
    expect(mine.map((c) => c.body)).toEqual([`<!-- janus-plan . -->\n${result.stdout}`]);
  });

  it("fails with exit 3 and the forge's answer when the token is refused, after printing the plan", async () => {
    const gitea = forge();
    const tokenFile = join(await mkdtemp(join(tmpdir(), 'janus-forge-token-')), 'token');
    await writeFile(tokenFile, 'not-a-token\n');
    const cwd = await mkdtemp(join(tmpdir(), 'janus-plan-comment-'));
    await mkdir(join(cwd, 'transactions')); // nothing to plan: no cluster needed
    const result = await janus(
      ['plan', '.', '-o', 'markdown', '--comment-on', '1', '--forge-provider', 'gitea'],
      {
        cwd,
        env: {
          JANUS_ROOT: 'transactions',
          JANUS_FORGE_TOKEN_FILE: tokenFile,
          JANUS_FORGE_REPOSITORY: 'janus-admin/none',
          JANUS_FORGE_API_URL: `${gitea.url}/api/v1`,
          JANUS_ALLOW_INSECURE_HTTP: 'true',
        },
      },
    );
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('### Janus plan');
    expect(result.stderr).toContain(
      `cannot post the plan's comment: GET ${gitea.url}/api/v1/user: the forge answered HTTP 401`,
    );
    expect(result.stderr).not.toContain('not-a-token');
  });
});
