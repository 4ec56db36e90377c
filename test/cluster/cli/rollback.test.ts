/** `janus rollback` against a real API server and a real controller. */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  annotate,
  configMap,
  data,
  getTxn,
  lockHeldElsewhere,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { committedTransaction, useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-rollback');
const as = () => ({ kubeconfig: clients.kubeconfigs.admin });

interface CoreEvent {
  reason: string;
  message: string;
  involvedObject: { name: string };
}

async function eventsOf(name: string): Promise<CoreEvent[]> {
  const list = await clients.admin.list('v1', 'Event', ns.name);
  return (list.items as unknown as CoreEvent[]).filter((e) => e.involvedObject.name === name);
}

describe('janus rollback', () => {
  it('rolls a Committed transaction back and, with --wait, exits 0 once it is RolledBack', async () => {
    await committedTransaction(clients, ns.name, 'undo-me');
    const result = await janus(
      ['rollback', 'undo-me', '-n', ns.name, '--reason', 'v2 is slow', '--wait'],
      as(),
    );
    expect(result.stderr).toContain(`rollback of ${ns.name}/undo-me requested`);
    expect(result.stderr).toMatch(/undo-me: RollingBack/);
    expect(result.stderr).toContain(`${ns.name}/undo-me is RolledBack`);
    expect(result.code).toBe(0);
    expect(await data(clients.admin, ns.name, 'undo-me-a')).toEqual({ value: 'before' });
    expect((await getTxn(clients.admin, ns.name, 'undo-me')).status?.phase).toBe('RolledBack');
    // The reason and who asked are on record.
    const requested = (await eventsOf('undo-me')).find((e) => e.reason === 'RollbackRequestedByUser');
    expect(requested?.message).toBe('v2 is slow (by janus-test-admin)');
  });

  it('without --wait, requests and returns at once; the controller then rolls it back', async () => {
    await committedTransaction(clients, ns.name, 'quick');
    const result = await janus(['rollback', 'quick', '-n', ns.name], as());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Follow it with: janus status quick -n ${ns.name} --watch`);
    await waitForPhase(clients.admin, ns.name, 'quick', 'RolledBack');
    expect(await data(clients.admin, ns.name, 'quick-a')).toEqual({ value: 'before' });
    const requested = (await eventsOf('quick')).find((e) => e.reason === 'RollbackRequestedByUser');
    expect(requested?.message).toBe('requested with janus rollback by janus-test-admin');
  });

  it('has nothing to do on a RolledBack transaction, and says so', async () => {
    await committedTransaction(clients, ns.name, 'twice');
    expect((await janus(['rollback', 'twice', '-n', ns.name, '--wait'], as())).code).toBe(0);
    const again = await janus(['rollback', 'twice', '-n', ns.name, '--wait'], as());
    expect(again).toMatchObject({ code: 0, stderr: `${ns.name}/twice is already rolled back\n` });
  });

  it('refuses a transaction still being applied (exit 2), e.g. waiting for a lock', async () => {
    await clients.admin.create(configMap(ns.name, 'locked', { value: 'before' }));
    await lockHeldElsewhere(clients.admin, ns.name, 'locked');
    await clients.admin.create(
      transaction(ns.name, 'waiting', [
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'locked' },
          type: 'Patch',
          content: { data: { v: '2' } },
        },
      ]),
    );
    await eventually(async () => {
      const txn = await getTxn(clients.admin, ns.name, 'waiting');
      expect(txn.status?.conditions?.find((c) => c.type === 'Reconciling')?.reason).toBe('LockWait');
    });
    const status = await janus(['status', '-n', ns.name], as());
    expect(status.stderr).toMatch(/ waiting\s+Preparing\s+0\/1\s+\S+\s+LockWait/);
    const result = await janus(['rollback', 'waiting', '-n', ns.name], as());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`janus: ${ns.name}/waiting is Preparing: it is still being applied`);
    expect((await getTxn(clients.admin, ns.name, 'waiting')).metadata.annotations ?? {}).not.toHaveProperty(
      'tx.janus.io/request-rollback',
    );
  });

  it('retries a rollback that ended Failed in a conflict; --wait exits 1 when it fails again', async () => {
    await committedTransaction(clients, ns.name, 'contested');
    await clients.admin.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'contested-b', namespace: ns.name },
      { data: { value: 'theirs' } },
      PatchType.merge,
    );
    await annotate(clients.admin, ns.name, 'contested', { 'tx.janus.io/request-rollback': 'test' });
    await waitForPhase(clients.admin, ns.name, 'contested', 'Failed');
    const result = await janus(['rollback', 'contested', '-n', ns.name, '--wait'], as());
    expect(result.stderr).toContain(`retry of the rollback of ${ns.name}/contested requested: 1 change(s)`);
    expect(result.stderr).toMatch(
      /contested is Failed: .*someone else changed them after commit: ConfigMap \S+\/contested-b/,
    );
    expect(result.code).toBe(1);
    expect(await data(clients.admin, ns.name, 'contested-b')).toEqual({ value: 'theirs' }); // never overwritten
  });

  it('exits 2 for a Transaction that does not exist, and 1 when RBAC says no', async () => {
    expect(await janus(['rollback', 'nope', '-n', ns.name], as())).toMatchObject({
      code: 2,
      stderr: `janus: Transaction ${ns.name}/nope not found. If it finished a while ago, the retention policy may have pruned it: its record stays on the results branch (janus history ${ns.name}/nope)\n`,
    });
    const forbidden = await janus(['rollback', 'nope', '-n', ns.name], {
      kubeconfig: clients.kubeconfigs.alice,
    });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/403 Forbidden/);
  });
});
