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

describe('notifications from janus run', () => {
  it('notifies a committed directory and a rejected one, with its file and line', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    await writeFile(join(dir, 'key'), KEY);
    const config = join(dir, 'notifications.yaml');
    await writeFile(
      config,
      [
        'providers:',
        `  - {name: audit, type: cloudevents, address: "${listener.address}/audit", secretFile: ${join(dir, 'key')}}`,
        `routes: [{namespaces: [${ns.name}], providers: [audit]}]`,
        '',
      ].join('\n'),
    );
    const repo = await createTestRepo(git.server);
    await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--allowed-namespaces', ns.name],
      env: { JANUS_NOTIFICATIONS_CONFIG: config },
    });
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
});
