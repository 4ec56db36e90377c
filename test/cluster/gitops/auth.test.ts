/**
 * HTTPS credentials: read from a file (or the environment), sent to the Git server, never logged.
 * A refused token makes polls fail with a message that says so, and readiness report it.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from './harness.ts';

const TOKEN = 'ghp_secretTokenValue1234567890';
const clients = useClients();
const ns = useNamespace(clients, 'auth');
const server = useGitServer({ auth: { username: 'janus-bot', password: TOKEN } });
const janus = useJanus(clients);

async function tokenFile(content: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'janus-token-')), 'token');
  await writeFile(file, `${content}\n`);
  return file;
}

describe('Git credentials', () => {
  it('authenticates with a token from a file and never logs it', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      // The test server speaks plain http://: credentials go there only when allowed explicitly.
      args: [
        '--git-username',
        'janus-bot',
        '--git-token-file',
        await tokenFile(TOKEN),
        '--allow-insecure-http',
      ],
      logLevel: 'trace',
    });
    await repo.push(
      directory('authed', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    await waitForPhase(clients.admin, ns.name, 'authed', 'Committed');
    await eventually(async () => expect((await repo.result(ns.name, 'authed'))?.phase).toBe('Committed'));
    const logs = await run.logs();
    expect(logs.match(/Git credentials are sent over plain http/g)).toHaveLength(1);
    expect(logs).not.toContain(TOKEN);
    expect(logs).not.toContain(Buffer.from(`janus-bot:${TOKEN}`).toString('base64'));
  });

  it('reports a refused token in its poll errors and readiness, without the token', async () => {
    const repo = await createTestRepo(server.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--git-username', 'janus-bot'],
      env: { JANUS_GIT_TOKEN: 'wrong-token-value', JANUS_ALLOW_INSECURE_HTTP: 'true' },
      wait: false,
    });
    await eventually(async () =>
      expect(await run.logs()).toContain('the server refused the credentials (HTTP 401)'),
    );
    const ready = await fetch(`${await run.opsUrl()}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(
      '[-]git-reachable failed: no successful poll of the watched branch yet',
    );
    expect(await run.logs()).not.toContain('wrong-token-value');
  });
});
