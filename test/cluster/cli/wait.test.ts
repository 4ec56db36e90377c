/** `janus wait` for CI jobs: the outcome as an exit status, never hanging on a finished transaction. */
import { describe, expect, it } from 'vitest';
import { leaseName, microTime } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { cmTarget, configMap, transaction, txnRef } from '../../support/cluster/saga.ts';
import { janus, startJanus } from '../../support/processes/cli.ts';
import { committedTransaction, useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-wait');
const as = () => ({ kubeconfig: clients.kubeconfigs.admin });

describe('janus wait', () => {
  it('exits 0 at once for a Committed transaction, printing the outcome with -o json', async () => {
    await committedTransaction(clients, ns.name, 'done');
    const result = await janus(['wait', 'done', '-n', ns.name, '-o', 'json', '--timeout', '30s'], as());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(
      expect.objectContaining({ namespace: ns.name, name: 'done', phase: 'Committed', progress: '2/2' }),
    );
    expect(result.stderr).toContain(`${ns.name}/done: Committed`);
  });

  it('exits 1 promptly for a transaction that is rolled back, saying why', async () => {
    await clients.admin.create(configMap(ns.name, 'keep', { v: '1' }));
    const removePolicy = await failAtCommit(clients.admin, ns.name, 'refused');
    try {
      await clients.admin.create(
        transaction(ns.name, 'doomed', [
          { target: cmTarget('keep'), type: 'Patch', content: { data: { v: '2' } } },
          { target: cmTarget('refused'), type: 'Create', content: { data: { v: '1' } } },
        ]),
      );
      const result = await janus(['wait', 'doomed', '-n', ns.name, '--timeout', '2m'], as());
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${ns.name}/doomed: RolledBack`);
    } finally {
      await removePolicy();
    }
  });

  it('waits for a transaction that does not exist yet, then for its outcome', async () => {
    const waiting = startJanus(['wait', 'later', '-n', ns.name, '--timeout', '2m'], as());
    await new Promise((r) => setTimeout(r, 1_500)); // the merge has not been materialized yet
    await committedTransaction(clients, ns.name, 'later');
    const result = await waiting.exited;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${ns.name}/later: Committed`);
  });

  it('exits 1 when the transaction is deleted while it waits, and when --timeout passes', async () => {
    // Held by a lock another (live) transaction holds: it waits until the wait gives up, or is deleted.
    await clients.admin.create(configMap(ns.name, 'locked', { v: '1' }));
    await clients.admin.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName(resolveTarget(cmTarget('locked'), ns.name, true)), namespace: ns.name },
      spec: {
        holderIdentity: `${ns.name}/other/1`,
        leaseDurationSeconds: 3600,
        renewTime: microTime(Date.now()),
      },
    });
    await clients.admin.create(
      transaction(ns.name, 'stuck', [
        { target: cmTarget('locked'), type: 'Patch', content: { data: { v: '2' } } },
      ]),
    );
    const timedOut = await janus(['wait', 'stuck', '-n', ns.name, '--timeout', '3s'], as());
    expect(timedOut.code).toBe(1);
    expect(timedOut.stderr).toContain('still not finished after --timeout');

    const waiting = startJanus(['wait', 'stuck', '-n', ns.name, '--timeout', '2m'], as());
    await new Promise((r) => setTimeout(r, 1_500));
    await clients.admin.delete(txnRef(ns.name, 'stuck'));
    const result = await waiting.exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Deleted: the Transaction was deleted before it finished');
  });

  it('refuses a missing name or a zero timeout (exit 2)', async () => {
    expect((await janus(['wait'], as())).code).toBe(2);
    expect((await janus(['wait', 'x', '--timeout', '0s'], as())).code).toBe(2);
  });
});
