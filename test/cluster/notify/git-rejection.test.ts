/**
 * Notifications from `janus run`: a directory that applies and one the Git side rejects each
 * send a CloudEvent (the rejection through the Git side's results writer, the commit through the
 * notifier's informer), the rejection naming its file and line.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { startAlertmanager } from '../../support/servers/alertmanager.ts';
import { startListener, type TestListener } from '../../support/servers/http-listener.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'notify-git');
const git = useGitServer();
const janus = useJanus(clients);
const KEY = 'git-rejection-key';

let listener: TestListener;
let dir: string;

beforeAll(async () => {
  listener = await startListener();
  dir = await mkdtemp(join(tmpdir(), 'janus-notify-git-'));
});

afterAll(async () => {
  await listener?.close();
  await rm(dir, { recursive: true, force: true });
});

interface CloudEvent {
  id: string;
  subject: string;
  data: { phase: string; reason: string; errors?: string[]; commit?: string; path?: string; author?: string };
}

/** A signed CloudEvents provider posting to the listener's /<name>. */
const cloudevents = (name: string) =>
  `  - {name: ${name}, type: cloudevents, address: "${listener.address}/${name}", secretFile: ${join(dir, 'key')}}`;

/** A new repository watched by janus run (policy: ns alone) with these notification settings. */
async function watchedWith(settings: string[]) {
  await writeFile(join(dir, 'key'), KEY);
  const config = join(dir, 'notifications.yaml');
  await writeFile(config, [...settings, ''].join('\n'));
  const repo = await createTestRepo(git.server);
  await janus.start({
    repo: repo.url,
    namespace: ns.name,
    args: ['--allowed-namespaces', ns.name],
    env: { JANUS_NOTIFICATIONS_CONFIG: config },
  });
  return repo;
}

describe('notifications from janus run', () => {
  it('notifies a committed directory and a rejected one, with its file and line', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await watchedWith([
      'providers:',
      cloudevents('audit'),
      `routes: [{namespaces: [${ns.name}], providers: [audit]}]`,
    ]);
    const sha = await repo.push(
      {
        ...directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
        'transactions/broken/transaction.yaml':
          'apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: broken\nspec:\n  serviceAccountName: deployer\n  serviceAccountName: other\n',
        'transactions/broken/10-app.patch.yaml': configMapYaml('app', { v: '3' }),
      },
      'one good and one broken directory',
    );
    const good = await waitForPhase(clients.admin, ns.name, 'good', 'Committed');

    const events = await eventually(() => {
      const got = listener.at('/audit');
      expect(got).toHaveLength(2);
      return got;
    });
    for (const r of events)
      expect(r.headers['x-signature']).toBe(
        `sha256=${createHmac('sha256', KEY).update(r.body).digest('hex')}`,
      );
    const byPhase = new Map(
      events.map((r) => JSON.parse(r.body) as CloudEvent).map((e) => [e.data.phase, e]),
    );
    expect(byPhase.get('Committed')).toMatchObject({
      id: `${good.metadata.uid}/Committed`,
      data: { path: 'transactions/good', author: 'Test User', commit: sha },
    });
    const rejected = byPhase.get('Rejected');
    expect(rejected).toMatchObject({
      subject: `${ns.name}/broken`,
      data: { reason: 'the directory is invalid; nothing was applied', path: 'transactions/broken' },
    });
    expect(rejected?.id).toMatch(new RegExp(`^${ns.name}/broken@[0-9a-f]{40}/Rejected$`));
    expect(rejected?.data.errors?.[0]).toMatch(/^transactions\/broken\/transaction\.yaml:7: /);
    expect(rejected?.data.commit).toBe(sha);
  }, 300_000);

  it("files a rejection naming another team's namespace as the repository's: that team's routes and alerts hear nothing", async () => {
    // Bob's team has its own channel and Alertmanager route; this repository may use only ns.
    const bob = `${ns.name}-bob`;
    const alertmanager = await startAlertmanager(`${listener.address}/alertmanager-webhook`);
    try {
      await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
      await clients.admin.create(configMap(ns.name, 'neighbour', { v: '1' }));
      const repo = await watchedWith([
        'providers:',
        cloudevents('bob-channel'),
        cloudevents('platform'),
        `  - {name: alertmanager, type: alertmanager, address: "${alertmanager.address}/api/v2/alerts"}`,
        'routes:',
        `  - {namespaces: [${bob}], providers: [bob-channel, alertmanager]}`,
        '  - {namespaces: [janus-system], providers: [platform, alertmanager]}',
      ]);
      // A pusher of this repository names bob's namespace, in a commit whose message holds links; beside it, a
      // neighbour's directory in the repository's own namespace.
      await repo.push(
        {
          ...directory('intruder', {
            namespace: bob,
            changes: { '10-app.patch.yaml': configMapYaml('neighbour', { v: 'mine' }) },
          }),
          ...directory('neighbour-v2', {
            changes: { '10-app.patch.yaml': configMapYaml('neighbour', { v: '2' }) },
          }),
        },
        '[approved](https://evil.example) see https://evil.example',
      );
      await waitForPhase(clients.admin, ns.name, 'neighbour-v2', 'Committed');

      // The platform team's route for the controller's namespace hears it, as the repository's.
      const heard = await eventually(() => {
        const got = listener.at('/platform');
        expect(got).toHaveLength(1);
        return JSON.parse(got[0]?.body ?? '') as CloudEvent;
      });
      expect(heard).toMatchObject({
        subject: 'janus-system/intruder',
        data: { phase: 'Rejected', path: 'transactions/intruder' },
      });
      expect(heard.data.reason).toContain(
        `recorded as the repository's: its namespace ${bob} is one this repository may not use`,
      );
      expect(heard.data.errors?.[0]).toContain(`namespace "${bob}" is not allowed for this repository`);
      const alerts = async () =>
        (await (await fetch(`${alertmanager.address}/api/v2/alerts`)).json()) as {
          labels: Record<string, string>;
        }[];
      await eventually(async () =>
        expect((await alerts()).map((a) => a.labels)).toContainEqual(
          expect.objectContaining({ namespace: 'janus-system', transaction: 'intruder', severity: 'error' }),
        ),
      );
      // Bob's channel and Bob's alerts heard nothing: neither an error alert nor a resolved warning.
      expect(listener.at('/bob-channel')).toEqual([]);
      expect((await alerts()).filter((a) => a.labels.namespace === bob)).toEqual([]);
      const webhooks = listener.at('/alertmanager-webhook').map((r) => r.body);
      expect(webhooks.filter((body) => body.includes(`"namespace":"${bob}"`))).toEqual([]);
      // On the results branch, the record is the repository's too; nothing is filed under bob.
      await eventually(async () =>
        expect(await repo.result('janus-system', 'intruder')).toMatchObject({ phase: 'Rejected' }),
      );
      expect(await repo.result(bob, 'intruder')).toBeUndefined();
    } finally {
      await alertmanager.stop();
    }
  }, 300_000);
});
