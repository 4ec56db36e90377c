/**
 * A hostile repository cannot stall or crash the poller: a YAML bomb (nested brackets, a billion
 * laughs) is refused in milliseconds, an oversized file is refused from its Git header without
 * being inflated, and a fetch larger than --max-fetch-bytes is stopped and retried later. Each is
 * reported with the file or the repository it is about; the rest of the commit applies and the
 * poller keeps going.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  data,
  serviceAccount,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  morePolls,
  successfulPolls,
  useGitServer,
  useJanus,
} from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'bounded-input');
const git = useGitServer();
const janus = useJanus(clients);

const MiB = 1024 * 1024;

interface LogLine {
  msg?: string;
  seconds?: number;
  err?: { message?: string };
}

function logLines(text: string, msg: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg === msg);
}

/** Ten aliases of the level below, nine times over: 10^9 leaves once expanded. */
function billionLaughs(): string {
  const lines = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata: {name: lol}',
    'l0: &l0 [lol, lol, lol, lol, lol]',
  ];
  for (let i = 1; i <= 9; i++)
    lines.push(
      `l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

describe('bounded input', () => {
  it('refuses YAML bombs and oversized files precisely, quickly, and applies the rest', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name });

    // Just under the 1 MiB file limit, so that it reaches the YAML parser.
    const brackets = '['.repeat(MiB - 1);
    // 5 MiB of one character: a few KiB once compressed, so only its header says how big it is.
    const oversized = configMapYaml('big', { blob: '0'.repeat(5 * MiB) });
    await repo.push(
      {
        ...directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
        ...directory('brackets', { changes: { '10-app.patch.yaml': brackets } }),
        ...directory('laughs', { changes: { '10-lol.create.yaml': billionLaughs() } }),
        ...directory('oversized', { changes: { '10-big.create.yaml': oversized } }),
      },
      'one good directory and three hostile ones',
    );

    await waitForPhase(clients.admin, ns.name, 'good', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
    const rejected = async (name: string) =>
      eventually(async () => {
        const result = await repo.result(ns.name, name);
        if (result?.phase !== 'Rejected') throw new Error(`${name}: ${String(result?.phase)}`);
        return result.errors;
      });
    expect(await rejected('brackets')).toEqual([
      expect.objectContaining({
        file: 'transactions/brackets/10-app.patch.yaml',
        code: 'yaml-too-complex',
        line: 1,
        column: 101,
        message: 'collections are nested more than 100 levels deep; the file was not parsed',
      }),
    ]);
    expect(await rejected('laughs')).toEqual([
      expect.objectContaining({
        file: 'transactions/laughs/10-lol.create.yaml',
        code: 'yaml-too-complex',
        line: expect.any(Number),
        message: expect.stringMatching(/^aliases expand to more than 1048576 bytes of YAML \(at \*l\d\)$/),
      }),
    ]);
    expect(await rejected('oversized')).toEqual([
      expect.objectContaining({
        file: 'transactions/oversized/10-big.create.yaml',
        code: 'file-too-large',
        message: `the file is ${Buffer.byteLength(oversized)} bytes; the limit is ${MiB} bytes per file`,
      }),
    ]);
    expect(await repo.subjects()).toEqual(
      expect.arrayContaining([
        `${ns.name}/brackets: Rejected (1 error)`,
        `${ns.name}/laughs: Rejected (1 error)`,
        `${ns.name}/oversized: Rejected (1 error)`,
      ]),
    );

    // No poll stalled on them (the bracket bomb alone used to take ~9 s, then overflow the stack),
    // and the poller goes on.
    await morePolls(run, 2);
    const polls = logLines(await run.logs(), 'poll done');
    expect(Math.max(...polls.map((p) => p.seconds ?? 0))).toBeLessThan(8);
    expect(logLines(await run.logs(), 'poll failed; retrying with backoff')).toEqual([]);
  });

  it('stops a fetch larger than --max-fetch-bytes, keeps polling, and recovers once the fetch is small', async () => {
    // 1 MiB of random bytes does not compress: the first fetch of the branch is over 256 KiB.
    const repo = await createTestRepo(git.server, { 'assets/big.bin': randomBytes(MiB).toString('base64') });
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--max-fetch-bytes', '256Ki'],
      wait: false,
    });
    const limit = `the server sent more than 256 KiB (262144 bytes) for one fetch, the limit set by --max-fetch-bytes (JANUS_MAX_FETCH_BYTES); the download was stopped`;
    const failed = await eventually(async () => {
      const lines = logLines(await run.logs(), 'poll failed; retrying with backoff');
      if (lines.length < 2) throw new Error(`${lines.length} failed polls so far`);
      return lines;
    });
    for (const line of failed) expect(line.err?.message).toBe(`fetch ${repo.url} (main): ${limit}`);
    const ready = await fetch(`${await run.opsUrl()}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(
      `[-]git-reachable failed: no successful poll of the watched branch yet: fetch ${repo.url} (main): ${limit}`,
    );
    expect(run.child.exitCode).toBeNull();

    // Only the tip is fetched at first: once it no longer holds the large file, the poll succeeds.
    await repo.push({ 'assets/big.bin': null }, 'drop the large file');
    await eventually(async () => expect(await successfulPolls(run)).toBeGreaterThan(0), {
      timeoutMs: 60_000,
    });
  });
});
