/**
 * `janus poll`, `janus suspend` and `janus resume` against a running `janus run`, a real Git
 * server and the real API server: a poll on request (an hour between regular polls, so nothing
 * else explains it), and a suspension that holds across a restart and shows in /readyz, the
 * metrics and `janus status`, until resume materializes what landed meanwhile.
 */
import { appendFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  serviceAccount,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'git-control');
const server = useGitServer();
const run = useJanus(clients);

/** Set JANUS_DOC_OUT=<file> to keep what each command printed (docs/cli.md shows it). */
const cli = async (command: string, repo: string, ...args: string[]) => {
  const result = await janus([command, '--repo', repo, '--controller-namespace', 'janus-system', ...args], {
    kubeconfig: clients.kubeconfigs.admin,
  });
  const out = process.env.JANUS_DOC_OUT;
  if (out) await appendFile(out, `$ janus ${command} ${args.join(' ')}\n${result.stderr}`);
  return result;
};

async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  return value === undefined ? undefined : Number(value);
}

describe('janus poll', () => {
  it('makes the running controller poll now and prints what it read and did', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    await run.start({ repo: repo.url, namespace: ns.name, pollInterval: '1h' });
    const tip = await repo.push(
      directory('polled', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );

    const polled = await cli('poll', repo.url, '-o', 'json');
    expect(polled.code, polled.stderr).toBe(0);
    expect(polled.stderr).toContain(`polled at ${tip.slice(0, 12)}: 1 new commit, 1 materialized`);
    const state = JSON.parse(polled.stdout);
    expect(state).toMatchObject({
      repository: repo.url,
      branch: 'main',
      root: 'transactions',
      lastPoll: { commit: tip, ok: true },
    });
    expect(state.suspended).toBeUndefined();
    await waitForPhase(clients.admin, ns.name, 'polled', 'Committed');

    const again = await cli('poll', repo.url);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`polled at ${tip.slice(0, 12)}: nothing new`);
  });

  it('names the Git sides to choose from when --repo matches none', async () => {
    const result = await janus(
      ['poll', '--repo', 'https://git.example.com/nothing', '--controller-namespace', 'janus-system'],
      { kubeconfig: clients.kubeconfigs.admin },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no Git side of repository https://git.example.com/nothing');
    const empty = await janus(['poll', '--controller-namespace', 'kube-public'], {
      kubeconfig: clients.kubeconfigs.admin,
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no Git side found in namespace kube-public');
  });
});

describe('janus suspend and janus resume', () => {
  it('holds new directories across a restart, shows it everywhere, and resume applies what landed', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'frozen', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const first = await run.start({ repo: repo.url, namespace: ns.name, pollInterval: '1s' });

    const suspended = await cli('suspend', repo.url, '--reason', 'change freeze', '-o', 'yaml');
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(suspended.stderr).toMatch(/is suspended since \S+ by \S+: change freeze: no new transaction/);
    expect(suspended.stdout).toContain('reason: change freeze');
    const ops = await first.opsUrl();
    await eventually(async () => {
      const ready = await fetch(`${ops}/readyz`);
      expect(ready.status).toBe(200);
      const text = await ready.clone().text();
      if (process.env.JANUS_DOC_OUT) await appendFile(process.env.JANUS_DOC_OUT, `$ curl /readyz\n${text}`);
      expect(await ready.text()).toMatch(
        /\[\+\]git-reachable ok: not checked: the Git side is suspended since .*: change freeze/,
      );
      expect(await metric(ops, 'janus_git_suspended')).toBe(1);
    });
    const twice = await cli('suspend', repo.url);
    expect(twice.code).toBe(0);
    expect(twice.stderr).toContain('is already suspended');
    const refused = await cli('poll', repo.url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('it does not poll until janus resume');

    await repo.push(
      directory('held', { changes: { '10-frozen.patch.yaml': configMapYaml('frozen', { v: '2' }) } }),
    );
    // A new process (a restart, or another replica taking over) reads the suspension first.
    await first.stop();
    const second = await run.start({ repo: repo.url, namespace: ns.name, pollInterval: '1s', wait: false });
    await eventually(async () => {
      const skipped = (await second.logs()).match(/"msg":"poll skipped"/g) ?? [];
      expect(skipped.length).toBeGreaterThanOrEqual(3);
    });
    expect(await clients.admin.find(txnRef(ns.name, 'held'))).toBeUndefined();
    expect(await metric(await second.opsUrl(), 'janus_git_suspended')).toBe(1);
    const status = await janus(['status', '-n', ns.name, '--controller-namespace', 'janus-system'], {
      kubeconfig: clients.kubeconfigs.admin,
    });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(
      `Git side of ${repo.url} (branch main, folder transactions) is suspended`,
    );

    const resumed = await cli('resume', repo.url);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('is resumed');
    expect(resumed.stderr).toMatch(/polled at [0-9a-f]{12}: 1 new commit, 1 materialized/);
    await waitForPhase(clients.admin, ns.name, 'held', 'Committed');
    expect(await metric(await second.opsUrl(), 'janus_git_suspended')).toBe(0);
    const after = await janus(['status', '-n', ns.name, '--controller-namespace', 'janus-system'], {
      kubeconfig: clients.kubeconfigs.admin,
    });
    expect(after.stderr).not.toContain('is suspended');
  });
});
