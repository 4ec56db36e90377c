/** Leader election on a real Lease, as the controller identity (whose RBAC is the production one). */
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../src/kube/client.ts';
import { LeaderElector, type LeaderElectorOptions } from '../../../src/runtime/leader-election.ts';
import type { Lease } from '../../../src/runtime/lease-record.ts';
import { microTime } from '../../../src/runtime/lease-record.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import { PartitionableClient } from './fault-injection.ts';

const clients = useClients();
const ns = useNamespace(clients, 'rt');
const LEASE = 'janus-leader';
const electors: LeaderElector[] = [];
/** What every elector of a test did, in order: "<name> started" / "<name> stopped". */
let log: string[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  log = [];
});

/** Fast timings for tests; the safety margin leaseDuration − renewDeadline stays 3 s. */
const fast = { leaseDurationMs: 5_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 };

function elector(
  name: string,
  opts: Partial<LeaderElectorOptions> & { client?: Pick<KubeClient, 'request'> } = {},
): LeaderElector & { terms: AbortSignal[] } {
  const terms: AbortSignal[] = [];
  const e = new LeaderElector({
    client: clients.controller.client,
    namespace: ns.name,
    name: LEASE,
    identity: name,
    ...fast,
    onStartedLeading: (signal) => {
      terms.push(signal);
      log.push(`${name} started`);
    },
    onStoppedLeading: () => log.push(`${name} stopped`),
    ...opts,
  });
  electors.push(e);
  e.start();
  return Object.assign(e, { terms });
}

const getLease = () =>
  clients.admin.get<Lease>({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    name: LEASE,
    namespace: ns.name,
  });

describe('LeaderElector', () => {
  it('lets exactly one of two candidates lead, and keeps it leading while it renews', async () => {
    const a = elector('a');
    const b = elector('b');
    const leader = await eventually(() => {
      const leaders = [a, b].filter((e) => e.isLeader());
      expect(leaders).toHaveLength(1);
      return leaders[0]!;
    });

    const renewals = new Set<string>();
    await eventually(async () => {
      const spec = (await getLease()).spec;
      expect([a.isLeader(), b.isLeader()].filter(Boolean)).toHaveLength(1);
      expect(spec?.holderIdentity).toBe(leader.identity);
      renewals.add(spec?.renewTime ?? '');
      expect(renewals.size).toBeGreaterThanOrEqual(4);
    });

    expect(log).toEqual([`${leader.identity} started`]);
    expect([...renewals].every((t) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(t))).toBe(true);
    expect(a.leader()).toBe(leader.identity);
    expect(b.leader()).toBe(leader.identity);
  });

  it('on a graceful stop, holds the lease until its work is done, then releases it to the standby at once', async () => {
    let holderWhenWorkEnded: string | undefined;
    const a = elector('a', {
      // A lease that would take a minute to expire: the standby can only lead sooner by a release.
      leaseDurationMs: 60_000,
      onStartedLeading: async (signal) => {
        log.push('a started');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        holderWhenWorkEnded = (await getLease()).spec?.holderIdentity;
        log.push('a work done');
      },
    });
    await eventually(() => expect(a.isLeader()).toBe(true));
    const b = elector('b', { leaseDurationMs: 60_000 });
    await eventually(() => expect(b.leader()).toBe('a'));

    await a.stop();

    expect(holderWhenWorkEnded).toBe('a');
    expect(log.filter((l) => l.startsWith('a'))).toEqual(['a started', 'a work done', 'a stopped']);
    await eventually(() => expect(b.isLeader()).toBe(true), { timeoutMs: 30_000 });
    const lease = await getLease();
    expect(lease.spec).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 60, leaseTransitions: 1 });
  });

  it('when the leader dies, it steps down before the standby takes over after expiry', async () => {
    const network = new PartitionableClient(clients.controller.client);
    const a = elector('a', { client: network });
    await eventually(() => expect(a.isLeader()).toBe(true));
    const b = elector('b');
    await eventually(() => expect(b.leader()).toBe('a'));

    network.partitioned = true;

    await eventually(() => expect(b.isLeader()).toBe(true));
    expect(a.isLeader()).toBe(false);
    expect(a.terms[0]?.aborted).toBe(true);
    // Safety: the dead leader's term ended (renewDeadline) before the standby's began (leaseDuration).
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
    expect((await getLease()).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('steps down at once when a renewal finds the lease taken by someone else', async () => {
    // A renewDeadline far beyond the wait below: only noticing the new holder can end the term in time.
    const a = elector('a', { leaseDurationMs: 120_000, renewDeadlineMs: 100_000 });
    await eventually(() => expect(a.isLeader()).toBe(true));

    const lease = await getLease();
    await clients.admin.replace<Lease>({
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: 'intruder',
        leaseDurationSeconds: 3600,
        renewTime: microTime(Date.now()),
      },
    });

    await eventually(() => expect(log).toEqual(['a started', 'a stopped']), { timeoutMs: 30_000 });
    expect(a.isLeader()).toBe(false);
    expect(a.terms[0]?.aborted).toBe(true);
    expect(a.leader()).toBe('intruder');
    expect((await getLease()).spec?.holderIdentity).toBe('intruder');
  });

  it('rejects timings that would let two leaders overlap', () => {
    const base = { client: clients.controller.client, namespace: 'x', name: 'y', onStartedLeading: () => {} };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow();
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow();
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 15_500 })).toThrow(/whole number of seconds/);
    expect(new LeaderElector(base).identity).toMatch(/^.+_[0-9a-f]{8}$/);
  });
});
