/**
 * One record per outcome across a leader kill (issue 34, item 12). Two replicas under leader
 * election; three directories pushed; the leader is killed at each point of a record's way to the
 * results branch: its push never sent, in flight and landing only once the next leader has read
 * the branch (and recorded the same outcomes itself), or landed without its answer. The standby
 * takes over and finishes; then the killed replica comes back with its cache (its spool still
 * holds what it had queued) and leads again. Each Transaction must end with exactly one record of
 * each outcome, and its result file at its last outcome.
 *
 * The points, per record: the materializer's Pending records (the poll's push, before the cursor
 * moves) and the reporter's Committed records (the Transactions are held on a lock until the
 * Pending push is through, so that the two pushes never merge).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  getTxn,
  lockHeldElsewhere,
  serviceAccount,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import type { HeldPush } from '../../support/git/git-server.ts';
import { deliverWebhook, PUSH_TO_MAIN, webhookSecretArgs } from '../../support/git/webhook.ts';
import type { JanusRunProcess } from '../../support/processes/janus-run.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  fastLeaderElection,
  successfulPolls,
  type TestRepo,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'once');
const server = useGitServer();
const janus = useJanus(clients);

const NAMES = ['one', 'two', 'three'];

type Point = 'Pending' | 'Committed';
/** What becomes of the leader's push when it dies: never sent, landing late, landed unanswered. */
type Fate = 'dropped' | 'late' | 'unanswered';

/** How many records of `phase` the results branch holds per directory. */
async function recordsOf(repo: TestRepo, phase: string): Promise<number[]> {
  const subjects = await repo.subjects();
  return NAMES.map((name) => subjects.filter((s) => s.startsWith(`${ns.name}/${name}: ${phase} (`)).length);
}

/** "result recorded" log lines of `phase` records: queued in the process's spool. */
async function queued(process: JanusRunProcess, phase: string): Promise<number> {
  const log = await readFile(process.logFile, 'utf8');
  return log.split('\n').filter((l) => l.includes('"result recorded"') && l.includes(`: ${phase} (`)).length;
}

/**
 * Has `process` (the leader) poll now and waits until it did: a poll first pushes every result
 * queued before it, so after this its spool holds nothing it had then.
 */
async function pollNow(process: JanusRunProcess): Promise<void> {
  const before = await successfulPolls(process);
  await deliverWebhook(await process.opsUrl(), PUSH_TO_MAIN);
  await eventually(async () => expect(await successfulPolls(process)).toBeGreaterThan(before));
}

/** Every Transaction Committed with exactly one Pending and one Committed record, its file at Committed. */
async function expectOneRecordPerOutcome(repo: TestRepo): Promise<void> {
  expect(await recordsOf(repo, 'Committed')).toEqual([1, 1, 1]);
  expect((await recordsOf(repo, 'Pending')).every((n) => n <= 1)).toBe(true);
  for (const name of NAMES) {
    const uid = (await getTxn(clients.admin, ns.name, name)).metadata.uid;
    expect(await repo.result(ns.name, name)).toMatchObject({ phase: 'Committed', transaction: { uid } });
  }
}

describe('exactly one record per outcome across a leader kill', () => {
  for (const point of ['Pending', 'Committed'] as const) {
    for (const fate of ['dropped', 'late', 'unanswered'] as const) {
      it(`the leader dies with its ${point} push ${fate}`, async () => {
        await killAndHandOver(point, fate);
      });
    }
  }
});

async function killAndHandOver(point: Point, fate: Fate): Promise<void> {
  await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
  const locks: string[] = [];
  for (const name of NAMES) {
    await clients.admin.create(configMap(ns.name, name, { v: '0' }));
    locks.push(await lockHeldElsewhere(clients.admin, ns.name, name));
  }
  const unlock = async () => {
    for (const name of locks)
      await clients.admin.delete({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: ns.name,
        name,
      });
  };
  const repo = await createTestRepo(server.server);
  const args = [...fastLeaderElection('janus-once'), ...(await webhookSecretArgs())];
  const start = (cacheDir?: string) =>
    janus.start({
      repo: repo.url,
      namespace: ns.name,
      args,
      pollInterval: '1h',
      wait: false,
      ...(cacheDir !== undefined && { cacheDir }),
    });
  const a = await start();
  const b = await start();
  await eventually(async () => expect((await successfulPolls(a)) + (await successfulPolls(b))).toBe(1), {
    timeoutMs: 90_000,
  });
  const [leader, standby] = (await successfulPolls(a)) > 0 ? [a, b] : [b, a];

  let held: HeldPush | undefined = point === 'Pending' ? server.server.holdNextPush(repo.name) : undefined;
  await repo.push(
    Object.assign(
      {},
      ...NAMES.map((name) =>
        directory(name, { changes: { '10-cm.patch.yaml': configMapYaml(name, { v: '1' }) } }),
      ),
    ),
  );
  await deliverWebhook(await leader.opsUrl(), PUSH_TO_MAIN);
  if (point === 'Committed') {
    // The poll is done (its Pending records pushed, the cursor past them); now the outcomes.
    await eventually(async () => expect(await successfulPolls(leader)).toBe(2));
    expect(await recordsOf(repo, 'Pending')).toEqual([1, 1, 1]);
    held = server.server.holdNextPush(repo.name);
    await unlock();
  }
  if (!held) throw new Error('no push held');
  await held.arrived;
  // Everything of this point is queued: in the held push, or in the spool behind it.
  await eventually(async () => expect(await queued(leader, point)).toBe(NAMES.length));

  let landed: Promise<void> | undefined;
  if (fate === 'unanswered') await held.land();
  await leader.kill();
  if (fate === 'dropped') held.drop();
  if (fate === 'late') {
    const push = held;
    // Lands as the next leader starts its first push: after it read the branch and recorded
    // the same outcomes itself.
    landed = new Promise((resolve, reject) =>
      server.server.beforeRequest(async (request) => {
        if (request.repo !== repo.name || request.query !== 'service=git-receive-pack') return false;
        await push.land().then(resolve, reject);
        return true;
      }),
    );
  }
  if (point === 'Pending') await unlock();

  for (const name of NAMES) await waitForPhase(clients.admin, ns.name, name, 'Committed');
  await eventually(async () => expect(await recordsOf(repo, 'Committed')).not.toContain(0), {
    timeoutMs: 60_000,
  });
  await landed;
  await pollNow(standby);
  await expectOneRecordPerOutcome(repo);
  const handedOver = await repo.subjects();

  // The killed replica comes back with its cache and leads again: its spool adds nothing.
  const back = await start(leader.cacheDir);
  await standby.stop();
  // Its spool is pushed before it reads the branch; whatever it queues after, before this poll.
  await eventually(
    async () => expect(await readFile(back.logFile, 'utf8')).toContain('"results branch read"'),
    {
      timeoutMs: 90_000,
    },
  );
  await pollNow(back);
  expect(await repo.subjects()).toEqual(handedOver);
  await expectOneRecordPerOutcome(repo);
}
