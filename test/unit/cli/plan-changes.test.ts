/**
 * planTransaction over the in-memory API: what it masks is decided by the target's kind (a
 * Secret, or a kind of the policy's --sops-kinds), whether the change is SOPS-encrypted or plain,
 * and it never tells whether a value matches the live one.
 */
import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { parseSopsKinds } from '../../../src/changes/sops-kinds.ts';
import { planTransaction } from '../../../src/cli/plan-changes.ts';
import { CORE_MAPPINGS, Discovery, type KubeObject, Objects } from '../../../src/kube/resources.ts';
import { FakeApi } from '../../support/fake-api.ts';
import { txnIn } from '../saga/transaction-fixture.ts';

const LEASE = 'coordination.k8s.io/v1';
const lease = (holderIdentity: string): KubeObject => ({
  apiVersion: LEASE,
  kind: 'Lease',
  metadata: { name: 'vault', namespace: 'shop' },
  spec: { holderIdentity },
});
const secret = (token: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'api', namespace: 'shop' },
  data: { token },
});

/** One plain Update of `content`'s target, planned over an API holding `live`. */
async function planOf(live: KubeObject, content: KubeObject, sopsKinds: readonly string[]) {
  const api = new FakeApi();
  api.put(live);
  const client = api.client();
  const discovery = new Discovery(client);
  for (const m of CORE_MAPPINGS) discovery.seed(m);
  const { metadata, ...body } = content;
  const change: Change = {
    type: 'Update',
    target: { apiVersion: content.apiVersion, kind: content.kind, name: metadata.name },
    content: body,
  };
  const base = txnIn();
  const txn: Transaction = { ...base, spec: { ...base.spec, changes: [change] } };
  const plan = await planTransaction(txn, 'transactions/x', {
    objects: new Objects(client, discovery),
    asServiceAccount: false,
    self: 'me',
    sopsKinds,
  });
  return plan.changes[0];
}

describe('planTransaction', () => {
  it("masks a plain change to a --sops-kinds kind on both sides: the live object's content too", async () => {
    const kinds = parseSopsKinds('Lease.coordination.k8s.io');
    const planned = await planOf(lease('live-decrypted-value'), lease('guess'), kinds);
    expect(planned?.action).toBe('update');
    expect(planned?.diff).not.toMatch(/live-decrypted-value|guess/);
    expect(planned?.note).toMatch(/never compared/);
    // Without the kind in --sops-kinds, the Lease is shown as it is.
    const shown = await planOf(lease('live-value'), lease('other'), []);
    expect(shown?.diff).toContain('+  holderIdentity: other');
  });

  it("plans a Secret's right value and a wrong guess alike", async () => {
    const right = await planOf(secret('cmlnaHQ='), secret('cmlnaHQ='), []);
    const guess = await planOf(secret('cmlnaHQ='), secret('Z3Vlc3M='), []);
    expect(right).toEqual(guess);
    expect(right).toMatchObject({ action: 'update', note: expect.stringMatching(/never compared/) });
  });
});
