/**
 * The forced rollback of a StatefulSet (issue 23) is as crash-safe as the rest of the saga: a
 * controller killed right after the requests that matter (the read of the set's update
 * revision, the status write that records it, the restore after it, the deletion of the stuck
 * pod and the requests around it) resumes to the end an uninterrupted run reaches: RolledBack,
 * every pod of the set Ready on the old image.
 */
import { describe, expect, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { serviceAccount, testNamespace, transaction } from '../support/cluster/saga.ts';
import { readyWith, statefulSet, statefulSetPods } from '../support/cluster/workloads.ts';
import { expectEndsAsBaseline, type Outcome, run, type Scenario } from '../support/crash/crash.ts';
import { statefulSetChanges } from '../support/crash/crash-scenarios.ts';

const clients = useClients();

const DEPLOYER = [
  { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'delete'] },
];

const crashLoopingRelease: Scenario = {
  phase: 'RolledBack',
  async setup(namespace) {
    await serviceAccount(clients.admin, namespace, 'deployer', DEPLOYER);
    await clients.admin.create(statefulSet(namespace, 'db', POD_IMAGES.ready));
    await readyWith(clients.admin, namespace, 'db', POD_IMAGES.ready);
  },
  transaction(namespace) {
    return transaction(namespace, 'release', statefulSetChanges(POD_IMAGES.crashLoop), {
      health: { timeout: '60s' },
    });
  },
  async observe(namespace) {
    // The end state once the set's controller has caught up.
    await readyWith(clients.admin, namespace, 'db', POD_IMAGES.ready);
    return (await statefulSetPods(clients.admin, namespace, 'db')).map((p) => ({
      name: p.name,
      image: p.image,
      ready: p.ready,
    }));
  },
};

interface Request {
  n: number;
  method: string;
  path: string;
}

/** The controller's API requests after its status first showed RollingBack. */
function requestsWhileRollingBack(log: string): Request[] {
  const requests: Request[] = [];
  let rollingBack = false;
  for (const line of log.split('\n')) {
    if (line.includes('"msg":"status written"') && line.includes('"phase":"RollingBack"')) rollingBack = true;
    const r = /"n":(\d+),"method":"([A-Z]+)","path":"([^"]+)"/.exec(line);
    if (rollingBack && r) requests.push({ n: Number(r[1]), method: r[2] ?? '', path: r[3] ?? '' });
  }
  return requests;
}

/** The requests after which to kill: around the record of the revision, and around the deletion. */
function killPoints(baseline: Outcome): number[] {
  const after = requestsWhileRollingBack(baseline.log);
  const read = after.find((r) => r.method === 'GET' && r.path.endsWith('/statefulsets/db'));
  const record = after.find(
    (r) => r.method === 'PATCH' && r.path.endsWith('/status') && r.n > (read?.n ?? 0),
  );
  const deletion = after.find((r) => r.method === 'DELETE' && r.path.endsWith('/pods/db-2'));
  expect(read && record && deletion).toBeTruthy();
  const points = [read, record].map((r) => r?.n ?? 0).flatMap((n) => [n, n + 1]);
  const d = deletion?.n ?? 0;
  return [...new Set([...points, d - 1, d, d + 1])].sort((a, b) => a - b);
}

describe('a StatefulSet forced rollback killed at its steps', () => {
  it('ends RolledBack with the old pods Ready, as the uninterrupted run', {
    timeout: 1_200_000,
  }, async () => {
    const fresh = (k: string) => testNamespace(clients.admin, `crash-fr-${k}`);
    const baseline = await run(
      clients.admin,
      clients.kubeconfigs.controller,
      crashLoopingRelease,
      await fresh('base'),
    );
    expect(baseline.phase).toBe('RolledBack');
    expect(baseline.targets).toEqual(
      ['db-0', 'db-1', 'db-2'].map((name) => ({ name, image: POD_IMAGES.ready, ready: true })),
    );
    const outcomes: Array<Outcome & { k: number }> = [];
    const points = killPoints(baseline);
    for (const k of points) {
      const namespace = await fresh(String(k));
      outcomes.push({
        ...(await run(clients.admin, clients.kubeconfigs.controller, crashLoopingRelease, namespace, k)),
        k,
      });
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
    }
    const crashed = outcomes.filter((o) => o.crashed).map((o) => o.k);
    process.stderr.write(
      `crash/forced-rollback: killed after requests ${points.join(', ')} of ${baseline.requests}; crashed at ${crashed.join(', ')}\n`,
    );
    // Every kill point is before the saga's end, so each run really crashed there.
    expect(crashed).toEqual(points);
    expectEndsAsBaseline(outcomes, baseline);
  });
});
