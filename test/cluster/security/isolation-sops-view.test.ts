/**
 * Issue 34, round 4, item 11, tried as the identity that would profit: a user with the stock
 * `view` role in a team's namespace, who may not read its Secrets. On a real cluster `view` is
 * aggregated: a custom resource whose ClusterRole carries the label
 * rbac.authorization.k8s.io/aggregate-to-view is readable by every viewer. A SOPS-encrypted
 * manifest of such a kind, applied decrypted, would put its secret values in clear for them; the
 * refusal used to know only the built-in `view` kinds. Now SOPS content is applied to Secrets and
 * to the kinds the platform team allows (--sops-kinds), and never to a kind the live aggregated
 * `view` ClusterRole reads, whatever the flag says. A team's SOPS Secret beside it commits.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { isTerminal, type Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { getTxn, serviceAccount, transaction, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';

const clients = useClients();
const ns = useNamespace(clients, 'iso-sops');

const GROUP = 'isolation.janus.example';
/** Aggregated into `view`: what a viewer reads. */
const VAULT = { kind: 'Vault', plural: 'vaults' };
/** Not aggregated anywhere: a viewer reads nothing of it. */
const LOCKER = { kind: 'Locker', plural: 'lockers' };

let team: AgeKey;

function crd({ kind, plural }: { kind: string; plural: string }): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as KubeObject;
}

const viewRole = () =>
  clients.admin.get<KubeObject & { rules?: { resources?: string[] }[] }>({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    name: 'view',
  });

beforeAll(async () => {
  sopsBinaries(); // a cold build takes minutes: here, not in a test's timeout
  team = await newAgeKey();
  for (const kind of [VAULT, LOCKER]) await clients.admin.create(crd(kind));
  // As an operator's Helm chart does for its custom resources.
  await clients.admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: `${VAULT.plural}-${GROUP}-view`,
      labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
    },
    rules: [{ apiGroups: [GROUP], resources: [VAULT.plural], verbs: ['get', 'list', 'watch'] }],
  } as KubeObject);
  await eventually(
    async () => {
      const rules = (await viewRole()).rules ?? [];
      expect(rules.some((r) => r.resources?.includes(VAULT.plural))).toBe(true);
      for (const kind of [VAULT, LOCKER]) await clients.admin.list(`${GROUP}/v1`, kind.kind, 'default');
    },
    { timeoutMs: 60_000 },
  );
}, 600_000);

/** The team: its deployer, its age key, and alice, a viewer of the namespace. */
async function setUp(): Promise<void> {
  await serviceAccount(clients.admin, ns.name, 'deployer', [
    { apiGroups: [''], resources: ['secrets'], verbs: ['*'] },
    { apiGroups: [GROUP], resources: [VAULT.plural, LOCKER.plural], verbs: ['*'] },
  ]);
  await clients.admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'janus-sops-age', namespace: ns.name },
    stringData: { 'team.agekey': `# public key: ${team.recipient}\n${team.identity}\n` },
  });
  await clients.admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-views', namespace: ns.name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice }],
  } as KubeObject);
  // The authorizer sees a new grant a moment later: until alice may list vaults, she is no viewer yet.
  await eventually(() => clients.alice.list(`${GROUP}/v1`, VAULT.kind, ns.name));
}

/** A Transaction creating `kind` `name` from a SOPS file whose spec (a password) is encrypted. */
function encryptedCreate(kind: { kind: string }, name: string, password: string): Transaction {
  const manifest = `apiVersion: ${GROUP}/v1\nkind: ${kind.kind}\nmetadata:\n  name: ${name}\nspec:\n  password: ${JSON.stringify(password)}\n`;
  const sopsContent = sopsEncrypt(manifest, {
    recipients: [team.recipient],
    flags: ['--encrypted-regex', '^spec$'],
  });
  return transaction(ns.name, name, [
    { target: { apiVersion: `${GROUP}/v1`, kind: kind.kind, name }, type: 'Create', sopsContent },
  ]);
}

/** A SOPS-encrypted Secret: what SOPS is for, and what must keep working beside the refusals. */
function encryptedSecret(name: string, password: string): Transaction {
  const manifest = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ntype: Opaque\nstringData:\n  password: ${JSON.stringify(password)}\n`;
  const sopsContent = sopsEncrypt(manifest, {
    recipients: [team.recipient],
    flags: ['--encrypted-regex', '^(data|stringData)$'],
  });
  return transaction(ns.name, name, [
    { target: { apiVersion: 'v1', kind: 'Secret', name }, type: 'Create', sopsContent },
  ]);
}

/** What alice, a viewer, reads of `kind` `name` in the namespace: its JSON, or undefined. */
async function asViewer(kind: { kind: string }, name: string): Promise<string | undefined> {
  const found = await clients.alice.find({
    apiVersion: `${GROUP}/v1`,
    kind: kind.kind,
    namespace: ns.name,
    name,
  });
  return found && JSON.stringify(found);
}

const controller = <T>(env: Record<string, string>, body: () => Promise<T>) =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns.name, env }, body);

/** Waits until the Transaction `name` has finished, whichever way; returns it. */
const finished = (name: string) =>
  eventually(async () => {
    const txn = await getTxn(clients.admin, ns.name, name);
    expect(isTerminal(txn.status?.phase ?? 'Pending')).toBe(true);
    return txn;
  });

const readyOf = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready');

describe('SOPS content never lands where the aggregated view role reads it', () => {
  it('refuses a SOPS custom resource by default, before anything is decrypted; a SOPS Secret beside it commits', async () => {
    await setUp();
    const password = `vault-${randomBytes(8).toString('hex')}`;
    await controller({}, async () => {
      await clients.admin.create(encryptedCreate(VAULT, 'vault', password));
      await clients.admin.create(encryptedSecret('beside', `secret-${randomBytes(8).toString('hex')}`));
      await waitForPhase(clients.admin, ns.name, 'beside', 'Committed', 30_000);
      const txn = await finished('vault');
      expect((await asViewer(VAULT, 'vault')) ?? '').not.toContain(password);
      expect(txn.status?.phase).toBe('Failed');
      expect(readyOf(txn)?.reason).toBe('SopsNotAllowed');
      expect(readyOf(txn)?.message).toContain(`Vault.${GROUP}`);
      expect(readyOf(txn)?.message).toContain('--sops-kinds');
    });
    expect(await asViewer(VAULT, 'vault')).toBeUndefined();
  });

  it('refuses a kind the platform team allowed when the live view role reads it; applies one it does not', async () => {
    await setUp();
    const vaultPassword = `vault-${randomBytes(8).toString('hex')}`;
    const lockerPassword = `locker-${randomBytes(8).toString('hex')}`;
    const allowed = { JANUS_SOPS_KINDS: `Vault.${GROUP},Locker.${GROUP}` };
    await controller(allowed, async () => {
      await clients.admin.create(encryptedCreate(VAULT, 'vault', vaultPassword));
      await clients.admin.create(encryptedCreate(LOCKER, 'locker', lockerPassword));
      await waitForPhase(clients.admin, ns.name, 'locker', 'Committed');
      const txn = await finished('vault');
      expect((await asViewer(VAULT, 'vault')) ?? '').not.toContain(vaultPassword);
      expect(txn.status?.phase).toBe('Failed');
      expect(readyOf(txn)?.reason).toBe('SopsNotAllowed');
      expect(readyOf(txn)?.message).toContain('ClusterRole view');
      expect(readyOf(txn)?.message).toContain(VAULT.plural);
    });
    // The viewer reads nothing of either: the vault was never made, the locker is not hers to read.
    expect(await asViewer(VAULT, 'vault')).toBeUndefined();
    await expect(asViewer(LOCKER, 'locker')).rejects.toMatchObject({ status: 403 });
  });
});
