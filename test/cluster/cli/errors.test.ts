/**
 * What a failure looks like from outside (docs/cli.md, "Errors"): the failures a user or an
 * operator causes (an unreachable API server, a missing kubeconfig or directory, refused Git
 * credentials, a Git server that refuses pushes) are one line naming what failed, with no stack
 * trace, on the command line and in every log line that retries them.
 */
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import { janus, startJanus } from '../../support/processes/cli.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from '../gitops/harness.ts';

/** A line of a stack trace, as Node prints them. */
const STACK_LINE = /\n\s+at /;
const TOKEN = 'ghp_rightTokenValue1234567890';

const clients = useClients();
const ns = useNamespace(clients, 'errors');
const authServer = useGitServer({ auth: { username: 'janus-bot', password: TOKEN } });
const openServer = useGitServer();
const run = useJanus(clients);

async function scratchDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'janus-errors-'));
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

async function kubeconfigFor(server: string, context: string): Promise<string> {
  const file = join(await scratchDir(), 'kubeconfig');
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'dev', cluster: { server } }],
      users: [{ name: 'dev', user: { token: 'not-a-real-token' } }],
      contexts: [{ name: context, context: { cluster: 'dev', user: 'dev' } }],
      'current-context': context,
    }),
  );
  return file;
}

interface LogLine {
  msg?: string;
  err?: { message?: unknown; stack?: unknown; cause?: unknown };
}

function logLines(text: string, msg: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg === msg);
}

describe('errors on the command line', () => {
  it('names the API server and the context when the server cannot be reached (exit 1)', async () => {
    const server = `https://127.0.0.1:${await closedPort()}`;
    const kubeconfig = await kubeconfigFor(server, 'kind-dev');

    const result = await janus(['status', '--kubeconfig', kubeconfig]);

    expect(result.stderr).toBe(
      `janus: cannot reach the API server ${server} (context "kind-dev"): connect ECONNREFUSED\n`,
    );
    expect(result.code).toBe(1);
  });

  it('does not wait on a server that is not there: janus wait ends at once, not at its timeout', async () => {
    const server = `https://127.0.0.1:${await closedPort()}`;
    const kubeconfig = await kubeconfigFor(server, 'kind-dev');

    // Before, a refused connection counted as passing trouble: wait retried it until --timeout.
    const result = await janus(['wait', 'deploy-v2', '--timeout', '1h', '--kubeconfig', kubeconfig]);

    expect(result.stderr).toBe(
      `janus: cannot reach the API server ${server} (context "kind-dev"): connect ECONNREFUSED\n`,
    );
    expect(result.code).toBe(1);
  });

  it('names a kubeconfig file that does not exist, from the flag or $KUBECONFIG (exit 1)', async () => {
    const missing = join(await scratchDir(), 'no-such-kubeconfig');
    const expected = `janus: cannot read kubeconfig ${missing}: ENOENT: no such file or directory, open '${missing}'\n`;

    const fromFlag = await janus(['status', '--kubeconfig', missing]);
    expect(fromFlag.stderr).toBe(expected);
    expect(fromFlag.code).toBe(1);

    const fromEnv = await janus(['status'], { kubeconfig: missing });
    expect(fromEnv.stderr).toBe(expected);
    expect(fromEnv.code).toBe(1);
  });

  it('names the kubeconfig when janus controller cannot read it, without a stack (exit 1)', async () => {
    const missing = join(await scratchDir(), 'no-such-kubeconfig');

    const result = await janus(['controller', '--metrics-bind-address', '0'], { kubeconfig: missing });

    expect(result.stderr).toBe(
      `janus: cannot read kubeconfig ${missing}: ENOENT: no such file or directory, open '${missing}'\n`,
    );
    expect(result.code).toBe(1);
  });

  it('names a directory to validate that does not exist, or is a file (exit 2)', async () => {
    const dir = await scratchDir();
    const missing = join(dir, 'no-such-directory');
    const file = join(dir, 'transaction.yaml');
    await writeFile(file, 'kind: Transaction\n');

    const result = await janus(['validate', missing]);
    expect(result.stderr).toBe(`janus: ${missing}: no such directory\n`);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(result.code).toBe(2);

    const notADirectory = await janus(['validate', file]);
    expect(notADirectory.stderr).toBe(`janus: ${file}: not a directory\n`);
    expect(notADirectory.code).toBe(2);
  });
});

describe('errors in the log of janus controller', () => {
  it('logs each failed claim of its instance (its first request) as one line naming the API server and the context', async () => {
    const server = `https://127.0.0.1:${await closedPort()}`;
    const controller = startJanus(['controller', '--metrics-bind-address', '0'], {
      kubeconfig: await kubeconfigFor(server, 'kind-dev'),
    });
    try {
      const failed = await eventually(() => {
        const lines = logLines(controller.stderr(), 'could not claim the instance yet; trying again');
        if (lines.length < 1) throw new Error('no failed claim logged yet');
        return lines;
      });

      for (const line of failed) {
        expect(line.err?.message).toBe(
          `cannot reach the API server ${server} (context "kind-dev"): connect ECONNREFUSED`,
        );
        expect(JSON.stringify(line)).not.toContain('"stack"');
      }
    } finally {
      controller.child.kill('SIGTERM');
      await controller.exited;
    }
  });
});

describe('errors in the log of janus run', () => {
  it('logs each poll refused for its Git credentials as one readable line, without a stack', async () => {
    const repo = await createTestRepo(authServer.server);
    const janusRun = await run.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--git-username', 'janus-bot'],
      // Credentials over plain http:// (the test server) need the explicit opt-in.
      env: { JANUS_GIT_TOKEN: 'wrong-token-value', JANUS_ALLOW_INSECURE_HTTP: 'true' },
      wait: false,
    });

    const failed = await eventually(async () => {
      const lines = logLines(await janusRun.logs(), 'poll failed; retrying with backoff');
      if (lines.length < 2) throw new Error(`${lines.length} failed polls logged so far`);
      return lines;
    });

    for (const line of failed) {
      // It was 1.7 KB with the stacks of the error and of its cause.
      expect(JSON.stringify(line).length).toBeLessThan(1_000);
      expect(line.err?.message).toMatch(
        /^fetch http:\/\/127\.0\.0\.1:\d+\/repo-\S+\.git \(main\): the server refused the credentials \(HTTP 401\); check the configured token or password$/,
      );
      expect(JSON.stringify(line)).not.toContain('"stack"');
      expect(JSON.stringify(line)).not.toContain('wrong-token-value');
    }
  });

  it('logs a refused results push with what the Git server said, without a stack', async () => {
    // A first run records the directories already there as baseline: one push to the results branch.
    const repo = await createTestRepo(
      openServer.server,
      directory('before-janus', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '1' }) } }),
    );
    openServer.server.beforeRequest((request) => {
      if (request.path === 'git-receive-pack' || request.query.includes('git-receive-pack'))
        throw new Error('pushes refused for a test');
      return false;
    });
    try {
      const janusRun = await run.start({ repo: repo.url, namespace: ns.name, wait: false });

      const failed = await eventually(async () => {
        const lines = logLines(await janusRun.logs(), 'results push failed; will retry');
        if (lines.length < 1) throw new Error('no failed push logged yet');
        return lines;
      });

      for (const line of failed) {
        expect(line.err?.message).toMatch(
          /^push http:\/\/127\.0\.0\.1:\d+\/repo-\S+\.git \(janus\/results\): HTTP 500 Internal Server Error$/,
        );
        expect(JSON.stringify(line)).not.toContain('"stack"');
      }
    } finally {
      openServer.server.beforeRequest(() => true);
    }
  });
});
