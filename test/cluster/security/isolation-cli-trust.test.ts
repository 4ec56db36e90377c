/**
 * Tenant against tenant, at the command line: what others wrote is not believed or printed as
 * is. `janus trace` refuses an applied-by stamp copied onto an object its change never targeted,
 * and does not vouch for one naming a Transaction that is gone or has another uid;
 * `janus status` prints no control character of a message a tenant put into a status.
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  configMap,
  getTxn,
  grantRole,
  lockHeldElsewhere,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { committedTransaction, useControlledNamespace } from '../cli/setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'iso-cli');
const asAdmin = () => ({ kubeconfig: clients.kubeconfigs.admin });

/** Alice, a neighbour in the namespace: these rules, nothing more. */
const grantAlice = (name: string, rules: Parameters<typeof grantRole>[3]) =>
  grantRole(clients.admin, ns.name, name, rules, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'User',
    name: clients.users.alice,
  });

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('janus trace believes only stamps Janus wrote where they are', () => {
  it('refuses an applied-by stamp a neighbour copied onto her own ConfigMap, and traces the real one', async () => {
    await committedTransaction(clients, ns.name, 'release');
    await grantAlice('configmap-writer', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
    ]);
    const real = await clients.alice.get<KubeObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'release-b',
      namespace: ns.name,
    });
    const stamp = real.metadata.annotations?.['tx.janus.io/applied-by'] ?? '';
    expect(stamp).toMatch(new RegExp(`^${ns.name}/release@.+#1$`));
    const planted = configMap(ns.name, 'planted', { payload: 'mine' });
    planted.metadata.annotations = { 'tx.janus.io/applied-by': stamp };
    await clients.alice.create(planted);

    const forged = await janus(['trace', 'configmap/planted', '-n', ns.name, '-o', 'json'], asAdmin());
    expect(forged.stderr).toContain(`ConfigMap ${ns.name}/planted is not traced`);
    expect(forged.stderr).toContain('which targets ConfigMap release-b, not this object');
    expect(JSON.parse(forged.stdout)).not.toHaveProperty('appliedBy');
    expect(forged.code).toBe(1);

    const genuine = await janus(['trace', 'configmap/release-b', '-n', ns.name], asAdmin());
    expect(genuine.code).toBe(0);
    expect(genuine.stderr).toContain(`was last written by Transaction ${ns.name}/release, change 1`);
  });

  it('does not vouch for a stamp naming a Transaction that is gone, or a uid the live one does not have', async () => {
    const txn = await committedTransaction(clients, ns.name, 'shipped');
    await grantAlice('configmap-author', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create'] },
    ]);
    // Alice writes stamps naming a pruned Transaction, and the live one under a uid it never had.
    const ghost = configMap(ns.name, 'ghost-written', { payload: 'mine' });
    ghost.metadata.annotations = { 'tx.janus.io/applied-by': `${ns.name}/long-gone@4f1e-not-a-uid#0` };
    await clients.alice.create(ghost);
    const namesake = configMap(ns.name, 'shipped-a-lookalike', { payload: 'mine' });
    namesake.metadata.annotations = { 'tx.janus.io/applied-by': `${ns.name}/shipped@0ld-uid#0` };
    await clients.alice.create(namesake);

    const gone = await janus(['trace', 'configmap/ghost-written', '-n', ns.name, '-o', 'json'], asAdmin());
    expect(gone.code).toBe(3);
    expect(gone.stderr).toContain(`ConfigMap ${ns.name}/ghost-written is not traced`);
    expect(gone.stderr).toContain(
      `Transaction ${ns.name}/long-gone (uid 4f1e-not-a-uid), which no longer exists`,
    );
    expect(gone.stderr).not.toContain('was last written by');
    expect(JSON.parse(gone.stdout)).toMatchObject({
      unverified: expect.stringContaining('no longer exists'),
      appliedBy: { found: false, resultFile: `results/${ns.name}/long-gone.yaml` },
    });

    const other = await janus(['trace', 'configmap/shipped-a-lookalike', '-n', ns.name], asAdmin());
    expect(other.code).toBe(3);
    expect(other.stderr).toContain(`which now has uid ${txn.metadata.uid}: another Transaction of that name`);
  });
});

describe('janus status prints what others wrote without its control characters', () => {
  it("shows a tenant's cancel reason with escape sequences as '?'", async () => {
    await clients.admin.create(configMap(ns.name, 'locked', { v: '1' }));
    await lockHeldElsewhere(clients.admin, ns.name, 'locked');
    await clients.admin.create(
      transaction(ns.name, 'stuck', [
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'locked' },
          type: 'Patch',
          content: { data: { v: '2' } },
        },
      ]),
    );
    await eventually(async () => {
      const txn = await getTxn(clients.admin, ns.name, 'stuck');
      expect(txn.status?.conditions?.find((c) => c.type === 'Reconciling')?.reason).toBe('LockWait');
    });
    await grantAlice('canceller', [
      { apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['get', 'patch'] },
    ]);
    // Clear the screen, retitle the window, and rewrite the line to say something reassuring.
    const reason = 'oops\u001b[2J\u001b]0;all good\u0007\rnothing to see';
    await clients.alice.patch(
      txnRef(ns.name, 'stuck'),
      { metadata: { annotations: { 'tx.janus.io/cancel': reason } } },
      PatchType.merge,
    );
    const txn = await waitForPhase(clients.admin, ns.name, 'stuck', 'RolledBack');
    expect(txn.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain(reason);

    const shown = await janus(['status', 'stuck', '-n', ns.name], asAdmin());
    expect(shown.code).toBe(0);
    expect(shown.stderr).toContain('oops?[2J?]0;all good??nothing to see');
    expect(shown.stderr.replaceAll('\n', '')).not.toMatch(CONTROL);
  });
});
