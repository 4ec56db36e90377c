/**
 * examples/ci holds the pull-request jobs people copy (GitHub Actions, GitLab CI). Their janus
 * commands are run here as the jobs run them, with their environment (the repository's policy),
 * on a repository with a transaction directory and against the tests' cluster: validate passes,
 * plan writes a review comment with the diff, and exits as the job expects. GitHub Actions' job
 * runs as Gitea Actions runs the same file (GITEA_ACTIONS, GITHUB_REPOSITORY, GITHUB_API_URL,
 * the job's token), against a real Gitea: its one command posts the plan on the pull request.
 * GitLab's job runs without a merge request (CI_MERGE_REQUEST_IID empty): the plan is not posted.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useClients } from '../../support/cluster/kube.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { ALL_ON_CONFIGMAPS, configMap, testNamespace } from '../../support/cluster/saga.ts';
import { openPullRequest, useGitea } from '../../support/servers/gitea.ts';

const clients = useClients();
const JANUS = join(REPO_ROOT, 'bin/janus');
const forge = useGitea();

interface Job {
  steps?: { run?: string }[];
  script?: string[];
}

/** The policy variables and the shell lines that run janus, from one CI file. */
async function jobsOf(file: string): Promise<{ env: Record<string, string>; commands: string[] }> {
  const doc = parse(await readFile(join(REPO_ROOT, 'examples/ci', file), 'utf8')) as Record<string, unknown>;
  const env = (doc.env ?? doc.variables) as Record<string, string>;
  const jobs = (doc.jobs ?? doc) as Record<string, Job>;
  const lines = Object.values(jobs).flatMap((job) => [
    ...(job?.steps ?? []).map((s) => s.run ?? ''),
    ...(Array.isArray(job?.script) ? job.script : []),
  ]);
  return { env, commands: lines.filter((l) => l.includes('/app/bin/janus')) };
}

async function repository(namespace: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'janus-ci-'));
  const dir = join(root, 'transactions', 'release');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'transaction.yaml'),
    `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: release\nspec:\n  serviceAccountName: deployer\n`,
  );
  await writeFile(
    join(dir, '10-settings.patch.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  mode: green\n`,
  );
  return root;
}

describe.each(['github-actions.yaml', 'gitlab-ci.yml'])('examples/ci/%s', (file) => {
  it('runs janus validate, then janus plan into a review comment, as the job does', async () => {
    const ns = await testNamespace(clients.admin, 'ci', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'settings', { mode: 'blue' }));
    const { env, commands } = await jobsOf(file);
    expect(env).toMatchObject({
      JANUS_ALLOWED_NAMESPACES: 'shop',
      JANUS_ALLOWED_SERVICE_ACCOUNTS: 'shop/deployer',
    });
    expect(
      commands.map((c) => (c.includes(' validate ') ? 'validate' : c.includes(' plan ') ? 'plan' : c)),
    ).toEqual(['validate', 'plan']);
    const cwd = await repository(ns);
    const temp = await mkdtemp(join(tmpdir(), 'janus-ci-runner-'));
    const kubeconfig = await readFile(clients.kubeconfigs.admin, 'utf8');
    const github = file === 'github-actions.yaml';
    const gitea = github ? forge() : undefined;
    const pr = gitea ? await openPullRequest(gitea, `ci-${ns}`) : undefined;
    const jobEnv = {
      ...process.env,
      // The example's policy, for this test's namespace instead of shop.
      ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replaceAll('shop', ns)])),
      RUNNER_TEMP: temp,
      KUBECONFIG_DATA: kubeconfig,
      JANUS_PLAN_KUBECONFIG: clients.kubeconfigs.admin,
      ...(gitea &&
        pr && {
          GITHUB_ACTIONS: 'true',
          GITEA_ACTIONS: 'true',
          GITHUB_REPOSITORY: pr.repository,
          GITHUB_API_URL: `${gitea.url}/api/v1`,
          GITHUB_TOKEN: gitea.token,
          // The test's Gitea speaks plain http:// on the loopback; a real forge is https://.
          JANUS_ALLOW_INSECURE_HTTP: 'true',
          PR_NUMBER: String(pr.number),
        }),
    };
    for (const command of commands) {
      const result = spawnSync('bash', ['-e', '-c', command.replaceAll('/app/bin/janus', JANUS)], {
        cwd,
        env: jobEnv,
        encoding: 'utf8',
      });
      expect({ command, code: result.status, stderr: result.status === 0 ? '' : result.stderr }).toEqual({
        command,
        code: 0,
        stderr: '',
      });
    }
    const comment = await readFile(join(cwd, 'plan.md'), 'utf8');
    expect(comment.split('\n')[0]).toBe('### Janus plan: 📝 would change');
    expect(comment).toContain(
      `#### \`${ns}/release\` (\`transactions/release\`), dry run as \`system:serviceaccount:${ns}:deployer\``,
    );
    expect(comment).toContain('-  mode: blue\n+  mode: green');
    if (gitea && pr) {
      const posted = await gitea.api<{ body: string }[]>(
        'GET',
        `/repos/${pr.repository}/issues/${pr.number}/comments`,
      );
      expect(posted.map((c) => c.body)).toEqual([`<!-- janus-plan . -->\n${comment}`]);
    }
  });
});
