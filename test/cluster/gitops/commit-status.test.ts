/**
 * The loop closed on the commit, against a real forge: Gitea (built from its Go module) serves the
 * watched repository over HTTP, its own push webhook nudges janus run, and the commit statuses
 * Janus sets are read back from Gitea's API, which keeps every status ever posted: so "once per
 * state" is counted, not assumed, also across a restart of janus run. The first scenario also
 * routes notifications (src/notify) to a test listener: each outcome arrives there with its commit
 * and its author.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { pushCommit } from '../../support/git/git-server.ts';
import { WEBHOOK_SECRET, webhookSecretArgs } from '../../support/git/webhook.ts';
import {
  type CommitStatusEntry,
  GITEA_ADMIN,
  type GiteaRepo,
  startGitea,
  type TestGitea,
} from '../../support/servers/gitea.ts';
import { startListener } from '../../support/servers/http-listener.ts';
import {
  configMapYaml,
  directory,
  fastLeaderElection,
  morePolls,
  successfulPolls,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'forge');
const janus = useJanus(clients);
let gitea: TestGitea;

beforeAll(async () => {
  gitea = await startGitea();
}, 1_800_000); // a cold cache builds Gitea first (build-gitea.sh); then it starts in seconds
afterAll(async () => {
  await gitea?.stop();
});

async function tokenFile(token: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'janus-forge-token-')), 'token');
  await writeFile(file, `${token}\n`);
  return file;
}

/** The statuses of `context` on `sha`, oldest first, once the newest is in `state`. */
async function statusesUntil(repo: GiteaRepo, sha: string, context: string, state: string) {
  return eventually(
    async () => {
      const all = (await gitea.statuses(repo, sha)).filter((s) => s.context === context);
      if (all.at(-1)?.state !== state) {
        throw new Error(`${context} on ${sha.slice(0, 8)}: ${all.map((s) => s.state).join(' → ') || 'none'}`);
      }
      return all;
    },
    { timeoutMs: 120_000 },
  );
}

/** No two statuses of one context say the same: each state (and each pending phase) is sent once. */
function expectEachOnce(entries: readonly CommitStatusEntry[]): void {
  const said = entries.map((s) => `${s.state} ${s.description}`);
  expect(said).toEqual([...new Set(said)]);
}

async function metric(url: string, line: RegExp): Promise<number> {
  return Number(line.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
}

describe('commit statuses on a real forge (Gitea)', () => {
  it('shows pending then success on a merged directory, failure with the reason on a rolled-back or rejected one, each once, also across a restart', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    await clients.admin.create(configMap(ns.name, 'first', { v: '1' }));
    await clients.admin.create(configMap(ns.name, 'second', { v: '1' }));
    const removePolicy = await failAtCommit(clients.admin, ns.name, 'second');
    try {
      const repo = await gitea.createRepo(`deploys-${process.pid}`);
      await pushCommit(
        repo.pushUrl,
        'main',
        { 'README.md': 'transactions live in transactions/\n' },
        'initial',
      );
      const token = await tokenFile(gitea.token);
      // Notifications too (src/notify): every outcome also reaches a webhook listener.
      const listener = await startListener();
      const notifications = join(await mkdtemp(join(tmpdir(), 'janus-forge-notify-')), 'notifications.yaml');
      await writeFile(
        notifications,
        `providers: [{name: hook, type: cloudevents, address: "${listener.address}/hook", secretFile: ${token}}]\n` +
          `routes: [{namespaces: [${ns.name}], providers: [hook]}]\n`,
      );
      const args = [
        '--notifications-config',
        notifications,
        '--git-username',
        GITEA_ADMIN,
        '--git-token-file',
        token,
        '--allow-insecure-http',
        '--commit-status-token-file',
        token,
        '--commit-status-provider',
        'gitea',
        '--commit-status-target-url',
        'https://janus.example.com/{namespace}/{name}?commit={sha}',
        ...(await webhookSecretArgs()),
      ];
      // An hour between polls: only Gitea's push webhook explains a directory applied in time.
      const run = await janus.start({ repo: repo.cloneUrl, namespace: ns.name, pollInterval: '1h', args });
      await gitea.addPushWebhook(repo, `${await run.opsUrl()}/webhook`, WEBHOOK_SECRET);

      const good = await pushCommit(
        repo.pushUrl,
        'main',
        directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
        'Merge pull request #1: app v2',
      );
      await waitForPhase(clients.admin, ns.name, 'good', 'Committed');
      const goodStatuses = await statusesUntil(repo, good, `janus/${ns.name}/good`, 'success');
      expect(goodStatuses[0]?.state).toBe('pending');
      expect(goodStatuses.at(-1)).toMatchObject({
        description: expect.stringMatching(/^Committed: /),
        target_url: `https://janus.example.com/${ns.name}/good?commit=${good}`,
      });
      expectEachOnce(goodStatuses);

      const rolledBack = await pushCommit(
        repo.pushUrl,
        'main',
        directory('two-step', {
          changes: {
            '10-first.patch.yaml': configMapYaml('first', { v: '2' }),
            '20-second.patch.yaml': configMapYaml('second', { v: '2' }),
          },
        }),
        'Merge pull request #2: two steps',
      );
      const twoStep = await statusesUntil(repo, rolledBack, `janus/${ns.name}/two-step`, 'failure');
      expect(twoStep.at(-1)?.description).toMatch(/^RolledBack: .*second/);
      expect(twoStep.at(-1)?.description.length).toBeLessThanOrEqual(140);
      expectEachOnce(twoStep);

      const rejected = await pushCommit(
        repo.pushUrl,
        'main',
        directory('broken', { changes: { '10-app.patch.yaml': 'apiVersion: v1\nkind: [unclosed\n' } }),
        'Merge pull request #3: broken',
      );
      const broken = await statusesUntil(repo, rejected, `janus/${ns.name}/broken`, 'failure');
      expect(broken).toHaveLength(1);
      expect(broken[0]?.description).toMatch(
        /^Rejected, nothing applied: transactions\/broken\/10-app\.patch\.yaml:\d+: YAML syntax error/,
      );

      // Each outcome also arrived at the notification listener, naming its commit and its author.
      const notified = await eventually(() => {
        const events = listener
          .at('/hook')
          .map(
            (r) =>
              JSON.parse(r.body) as {
                subject: string;
                data: { phase: string; commit?: string; author?: string };
              },
          )
          .map((e) => `${e.subject} ${e.data.phase} ${e.data.commit} ${e.data.author}`);
        for (const expected of [
          `${ns.name}/good Committed ${good} Test User`,
          `${ns.name}/two-step RolledBack ${rolledBack} Test User`,
          `${ns.name}/broken Rejected ${rejected} Test User`,
        ])
          expect(events).toContain(expected);
        return events;
      });
      expect(notified.filter((e) => e.startsWith(`${ns.name}/good Committed`))).toHaveLength(1);
      await listener.close();

      // A restart (a new term knows nothing): it reads what each commit shows and sends nothing.
      const ops = await run.opsUrl();
      expect(
        await metric(ops, /^janus_commit_status_deliveries_total\{provider="gitea",result="failed"\} (\d+)/m),
      ).toBe(0);
      await run.stop();
      const again = await janus.start({
        repo: repo.cloneUrl,
        namespace: ns.name,
        pollInterval: '1h',
        cacheDir: run.cacheDir,
        args,
      });
      const againOps = await again.opsUrl();
      await eventually(async () =>
        expect(
          await metric(
            againOps,
            /^janus_commit_status_deliveries_total\{provider="gitea",result="unchanged"\} (\d+)/m,
          ),
        ).toBeGreaterThanOrEqual(2),
      );
      expect(
        await metric(
          againOps,
          /^janus_commit_status_deliveries_total\{provider="gitea",result="sent"\} (\d+)/m,
        ),
      ).toBe(0);
      expect(await successfulPolls(again)).toBeGreaterThanOrEqual(1);
      expect((await gitea.statuses(repo, good)).filter((s) => s.context === `janus/${ns.name}/good`)).toEqual(
        goodStatuses,
      );
      expect(
        (await gitea.statuses(repo, rolledBack)).filter((s) => s.context === `janus/${ns.name}/two-step`),
      ).toEqual(twoStep);
    } finally {
      await removePolicy();
    }
  });

  it("sends the outcomes a controller killed (kill -9) during a forge outage could not send (a Transaction's, a rejected directory's), once, after it restarts", async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'crash-app', { v: '1' }));
    const repo = await gitea.createRepo(`crash-${process.pid}`);
    await pushCommit(
      repo.pushUrl,
      'main',
      { 'README.md': 'transactions live in transactions/\n' },
      'initial',
    );
    const token = await tokenFile(gitea.token);
    const args = (api: string) => [
      ...['--git-username', GITEA_ADMIN, '--git-token-file', token, '--allow-insecure-http'],
      ...[
        '--commit-status-token-file',
        token,
        '--commit-status-provider',
        'gitea',
        '--commit-status-api-url',
        api,
      ],
    ];
    // The forge's API is down for the first process: nothing listens where it is told to send.
    const down = await closedPort();
    const run = await janus.start({
      repo: repo.cloneUrl,
      namespace: ns.name,
      args: args(`http://127.0.0.1:${down}/api/v1`),
    });
    const sha = await pushCommit(
      repo.pushUrl,
      'main',
      directory('crash', { changes: { '10-app.patch.yaml': configMapYaml('crash-app', { v: '2' }) } }),
      'Merge pull request #4: crash-app v2',
    );
    await waitForPhase(clients.admin, ns.name, 'crash', 'Committed');
    // A rejected directory has no Transaction a new term could find again: its status is spooled.
    const brokenSha = await pushCommit(
      repo.pushUrl,
      'main',
      directory('broken-crash', { changes: { '10-app.patch.yaml': 'kind: [unclosed\n' } }),
      'Merge pull request #5: broken',
    );
    await eventually(
      () =>
        gitea.api(
          'GET',
          `/repos/${repo.owner}/${repo.name}/contents/results/${ns.name}/broken-crash.yaml?ref=janus%2Fresults`,
        ),
      { timeoutMs: 60_000 },
    );
    // Two more polls: the cursor is past the rejected directory, which no poll reads again.
    await morePolls(run, 2);
    const ops = await run.opsUrl();
    await eventually(async () =>
      expect(
        await metric(
          ops,
          /^janus_commit_status_deliveries_total\{provider="gitea",result="retried"\} (\d+)/m,
        ),
      ).toBeGreaterThanOrEqual(1),
    );
    await run.kill();
    expect(await gitea.statuses(repo, sha)).toEqual([]);

    await janus.start({
      repo: repo.cloneUrl,
      namespace: ns.name,
      cacheDir: run.cacheDir,
      args: args(`${gitea.url}/api/v1`),
    });
    const shown = await statusesUntil(repo, sha, `janus/${ns.name}/crash`, 'success');
    // The new term sees the Transaction Committed: the outcome, once; the pending it never saw is not made up.
    expect(shown.map((s) => s.state)).toEqual(['success']);
    const broken = await statusesUntil(repo, brokenSha, `janus/${ns.name}/broken-crash`, 'failure');
    expect(broken).toHaveLength(1);
    expect(broken[0]?.description).toMatch(
      /^Rejected, nothing applied: transactions\/broken-crash\/10-app\.patch\.yaml:/,
    );
  });

  it('a new leader sends nothing its predecessor sent, and carries on', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'led', { v: '1' }));
    const repo = await gitea.createRepo(`leader-${process.pid}`);
    await pushCommit(
      repo.pushUrl,
      'main',
      { 'README.md': 'transactions live in transactions/\n' },
      'initial',
    );
    const token = await tokenFile(gitea.token);
    const args = [
      ...['--git-username', GITEA_ADMIN, '--git-token-file', token, '--allow-insecure-http'],
      ...['--commit-status-token-file', token, '--commit-status-provider', 'gitea'],
      ...fastLeaderElection('janus-forge'),
    ];
    const a = await janus.start({ repo: repo.cloneUrl, namespace: ns.name, args, wait: false });
    const b = await janus.start({ repo: repo.cloneUrl, namespace: ns.name, args, wait: false });
    await eventually(
      async () => expect((await successfulPolls(a)) + (await successfulPolls(b))).toBeGreaterThan(0),
      {
        timeoutMs: 90_000,
      },
    );
    const [leader, standby] = (await successfulPolls(a)) > 0 ? [a, b] : [b, a];
    const first = await pushCommit(
      repo.pushUrl,
      'main',
      directory('first', { changes: { '10-led.patch.yaml': configMapYaml('led', { v: '2' }) } }),
      'Merge pull request #6: led v2',
    );
    const before = await statusesUntil(repo, first, `janus/${ns.name}/first`, 'success');

    await leader.kill();
    const standbyOps = await standby.opsUrl();
    const delivered = (result: string) =>
      metric(
        standbyOps,
        new RegExp(
          `^janus_commit_status_deliveries_total\\{provider="gitea",result="${result}"\\} (\\d+)`,
          'm',
        ),
      );
    await eventually(async () => expect(await delivered('unchanged')).toBeGreaterThanOrEqual(1), {
      timeoutMs: 90_000,
    });
    expect(await delivered('sent')).toBe(0);
    expect((await gitea.statuses(repo, first)).filter((s) => s.context === `janus/${ns.name}/first`)).toEqual(
      before,
    );

    const second = await pushCommit(
      repo.pushUrl,
      'main',
      directory('second', { changes: { '10-led.patch.yaml': configMapYaml('led', { v: '3' }) } }),
      'Merge pull request #7: led v3',
    );
    const after = await statusesUntil(repo, second, `janus/${ns.name}/second`, 'success');
    expectEachOnce(after);
  });
});

/** A loopback port nothing listens on (connections are refused: a forge outage). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
