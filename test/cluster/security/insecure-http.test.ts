/**
 * Git credentials never cross the network in clear text by accident: `janus run` refuses an
 * http:// repository with a token (exit 2, before anything starts) unless --allow-insecure-http
 * says so, and then warns once.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import { janus, startJanus } from '../../support/processes/cli.ts';

const clients = useClients();

const TOKEN = 'ghp_doNotSendThisInClearText';
/** Nothing listens there: polls fail, which these tests do not mind. */
const REPO = 'http://127.0.0.1:9/org/deploys.git';

async function tokenFile(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'janus-token-')), 'token');
  await writeFile(file, `${TOKEN}\n`);
  return file;
}

const runArgs = (...more: string[]) => [
  'run',
  '--repo',
  REPO,
  '--controller-namespace',
  'janus-system',
  '--no-leader-elect',
  '--metrics-bind-address',
  '127.0.0.1:0',
  // An installation of its own: the run that starts must not reconcile, with its default
  // settings, the other tests' Transactions of the shared cluster (it did: an analysed crash
  // test's check was refused by it, "none is allowed").
  '--instance',
  'insecure-http-test',
  ...more,
];

describe('janus run with credentials for an http:// repository', () => {
  it('exits 2 at once when the token comes from a file', async () => {
    const file = await tokenFile();
    const result = await janus(runArgs('--git-token-file', file), {
      kubeconfig: clients.kubeconfigs.controller,
    });
    expect(result.stderr).toContain(
      `--repo ${REPO} is plain http:// and Git credentials are configured (file ${file}): they would cross the network in clear text. Use https://, or pass --allow-insecure-http (JANUS_ALLOW_INSECURE_HTTP=true) on a network you trust`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(result.stderr + result.stdout).not.toContain(TOKEN);
    expect(result.code).toBe(2);
  });

  it('exits 2 at once when the token comes from the environment', async () => {
    const result = await janus(runArgs(), {
      kubeconfig: clients.kubeconfigs.controller,
      env: { JANUS_GIT_TOKEN: TOKEN },
    });
    expect(result.stderr).toContain('(environment variable JANUS_GIT_TOKEN)');
    expect(result.code).toBe(2);
  });

  it('runs with --allow-insecure-http, and says once that the credentials travel in clear text', async () => {
    const process = startJanus(runArgs('--git-token-file', await tokenFile(), '--allow-insecure-http'), {
      kubeconfig: clients.kubeconfigs.controller,
    });
    try {
      const output = () => process.stdout() + process.stderr();
      await eventually(() => expect(output()).toContain('poll failed; retrying with backoff'));
      expect(output().match(/the Git credentials are sent over plain http:\/\//g)).toHaveLength(1);
      expect(output()).not.toContain(TOKEN);
    } finally {
      process.child.kill('SIGTERM');
      await process.exited;
    }
  });
});
