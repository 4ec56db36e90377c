/**
 * `janus recover` against a real API server and a real controller: a transaction of all four
 * change types whose rollback found every target changed by someone else after commit.
 */
import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import { leaseName, microTime } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  annotate,
  configMap,
  data,
  getTxn,
  leasesOf,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-recover');
const as = () => ({ kubeconfig: clients.kubeconfigs.admin });
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns.name });

/** Create, Update, Patch, Delete on `<p>-created`, `<p>-updated`, `<p>-patched`, `<p>-deleted`. */
function changes(p: string): Change[] {
  const target = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: `${p}-${name}` });
  return [
    { target: target('created'), type: 'Create', content: { data: { fresh: 'yes' } } },
    { target: target('updated'), type: 'Update', content: { data: { new: 'value' } } },
    { target: target('patched'), type: 'Patch', content: { data: { changed: 'after', added: 'new' } } },
    { target: target('deleted'), type: 'Delete' },
  ];
}

/** Commits the four changes, lets someone else change every target, then rolls back: Failed, 4 conflicts. */
async function conflicted(p: string): Promise<Transaction> {
  await clients.admin.create(configMap(ns.name, `${p}-updated`, { old: 'value' }));
  await clients.admin.create(configMap(ns.name, `${p}-patched`, { kept: 'yes', changed: 'before' }));
  await clients.admin.create(configMap(ns.name, `${p}-deleted`, { precious: 'data' }));
  await clients.admin.create(transaction(ns.name, p, changes(p)));
  await waitForPhase(clients.admin, ns.name, p, 'Committed');
  for (const name of ['created', 'updated', 'patched']) {
    await clients.admin.patch(cm(`${p}-${name}`), { data: { theirs: 'edit' } }, PatchType.merge);
  }
  await clients.admin.create(configMap(ns.name, `${p}-deleted`, { theirs: 'recreated' }));
  await annotate(clients.admin, ns.name, p, { 'tx.janus.io/request-rollback': 'test' });
  const failed = await waitForPhase(clients.admin, ns.name, p, 'Failed');
  expect(failed.status?.items?.map((i) => i.conflict)).toEqual([true, true, true, true]);
  return failed;
}

describe('janus recover', () => {
  it('shows each conflict as a diff from the current object to its prior state, and changes nothing', async () => {
    await conflicted('show');
    const result = await janus(['recover', 'show', '-n', ns.name], as());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${ns.name}/show: 4 committed change(s) left standing by the rollback`);
    expect(result.stderr).toMatch(/\[0\] Create v1 ConfigMap \S+\/show-created: CONFLICT/);
    expect(result.stderr).toContain('Restoring would delete it (it did not exist before the transaction).');
    expect(result.stderr).toMatch(
      /\[1\] Update v1 ConfigMap \S+\/show-updated: CONFLICT[\s\S]*?- {2}theirs: edit\n/,
    );
    expect(result.stderr).toMatch(
      /--- current ConfigMap \S+\/show-updated \(resourceVersion \d+\)\n\+\+\+ prior ConfigMap/,
    );
    expect(result.stderr).toMatch(/\+ {2}old: value\n/);
    expect(result.stderr).toContain(`To restore: janus recover show -n ${ns.name} --apply 0,1,2,3`);
    expect(result.stderr).toContain(`(as system:serviceaccount:${ns.name}:deployer)`);
    expect(await data(clients.admin, ns.name, 'show-updated')).toEqual({ new: 'value', theirs: 'edit' });
  });

  it('reports the same on stdout with -o json', async () => {
    await conflicted('report');
    const result = await janus(['recover', 'report', '-n', ns.name, '-o', 'json'], as());
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      standing: { change: number; restore: string; conflict: boolean }[];
    };
    expect(report.standing.map((s) => [s.change, s.conflict, s.restore])).toEqual([
      [0, true, 'delete'],
      [1, true, 'replace'],
      [2, true, 'replace'],
      [3, true, 'replace'],
    ]);
  });

  it('restores the chosen conflicts as the ServiceAccount, then the controller finishes the rollback', async () => {
    await conflicted('fix');
    // One change: restored; the controller retries them all, and the others conflict again.
    const one = await janus(['recover', 'fix', '-n', ns.name, '--apply', '1', '--wait'], as());
    expect(one.stderr).toMatch(/\[1\] restored: v1 ConfigMap \S+\/fix-updated/);
    expect(one.stderr).toMatch(/fix is Failed: /);
    expect(one.code).toBe(1);
    expect(await data(clients.admin, ns.name, 'fix-updated')).toEqual({ old: 'value' });
    expect(await data(clients.admin, ns.name, 'fix-patched')).toMatchObject({ theirs: 'edit' });
    // Recorded by the controller, which found the target restored: recover writes no status.
    const item = (await getTxn(clients.admin, ns.name, 'fix')).status?.items?.[1];
    expect(item).toMatchObject({ rolledBack: true, conflict: false, error: '' });

    // The rest: the transaction ends RolledBack, every target as it was before the transaction.
    const rest = await janus(['recover', 'fix', '-n', ns.name, '--apply', 'all', '--wait'], as());
    expect(rest.stderr).toContain(`${ns.name}/fix is RolledBack`);
    expect(rest.code).toBe(0);
    expect(await data(clients.admin, ns.name, 'fix-created')).toBeUndefined();
    expect(await data(clients.admin, ns.name, 'fix-patched')).toEqual({ kept: 'yes', changed: 'before' });
    expect(await data(clients.admin, ns.name, 'fix-deleted')).toEqual({ precious: 'data' });
    const events = (await clients.admin.list('v1', 'Event', ns.name)).items as unknown as {
      reason: string;
      involvedObject: { name: string };
    }[];
    expect(
      events.filter((e) => e.involvedObject.name === 'fix' && e.reason === 'RecoveredByHand'),
    ).toHaveLength(2);
  });

  it('does not restore a target another transaction has locked now', async () => {
    await conflicted('busy');
    // Once Failed, the transaction releases its own locks; then another one takes this target's.
    await eventually(async () =>
      expect(
        (await leasesOf(clients.admin, ns.name)).filter(
          (l) => l.metadata.labels?.['tx.janus.io/transaction'] === 'busy',
        ),
      ).toEqual([]),
    );
    const target = resolveTarget(
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'busy-updated' },
      ns.name,
      true,
    );
    await clients.admin.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName(target), namespace: ns.name },
      spec: {
        holderIdentity: `${ns.name}/other/uid-9`,
        leaseDurationSeconds: 3600,
        renewTime: microTime(Date.now()),
      },
    });
    const result = await janus(['recover', 'busy', '-n', ns.name, '--apply', '1'], as());
    expect(result.stderr).toContain(`[1] not restored: another transaction holds its lock: ${ns.name}/other`);
    expect(result.code).toBe(1);
    expect(await data(clients.admin, ns.name, 'busy-updated')).toEqual({ new: 'value', theirs: 'edit' });
    expect((await getTxn(clients.admin, ns.name, 'busy')).status?.items?.[1]?.rolledBack).not.toBe(true);
  });

  it('refuses, with exit 2, what it cannot do', async () => {
    await conflicted('refuse');
    const notStanding = await janus(['recover', 'refuse', '-n', ns.name, '--apply', '7'], as());
    expect(notStanding.code).toBe(2);
    expect(notStanding.stderr).toContain(
      '--apply: change 7 is not left standing by the rollback (standing: 0, 1, 2, 3)',
    );
    await clients.admin.create(configMap(ns.name, 'fine-a', { v: '1' }));
    await clients.admin.create(
      transaction(ns.name, 'fine', [
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'fine-a' },
          type: 'Patch',
          content: { data: { v: '2' } },
        },
      ]),
    );
    await waitForPhase(clients.admin, ns.name, 'fine', 'Committed');
    const committed = await janus(['recover', 'fine', '-n', ns.name], as());
    expect(committed.code).toBe(2);
    expect(committed.stderr).toContain(
      'is Committed: janus recover is for Failed transactions; to undo it, use janus rollback',
    );
  });
});
