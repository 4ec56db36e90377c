/**
 * SOPS-encrypted Secrets end to end, with the real sops (built from its Go module) and a real API
 * server: a rotation merged as `….update.sops.yaml` commits with the namespace's age key, rolls
 * back to the exact prior Secret, and neither password appears anywhere Janus writes: the
 * Transaction, ConfigMaps, Events, the results branch, `janus run`'s log. `janus plan` decrypts
 * only as an identity that may read the namespace's key; `janus validate` checks offline.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  everythingJanusWrote as everythingWritten,
  expectNowhere,
  secretData as secretDataOf,
} from '../../support/cluster/plaintext.ts';
import { serviceAccount } from '../../support/cluster/saga.ts';
import { janus as janusCli } from '../../support/processes/cli.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';
import {
  createTestRepo,
  directory,
  recordedPhase,
  type TestRepo,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'sops');
const gitServer = useGitServer();
const janus = useJanus(clients);

const SECRETS = [{ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }];

let team: AgeKey;
let otherTeam: AgeKey;
beforeAll(async () => {
  sopsBinaries(); // a cold build takes minutes: here, not in a test's timeout
  [team, otherTeam] = await Promise.all([newAgeKey(), newAgeKey()]);
}, 600_000);

const recorded = (repo: TestRepo, name: string, phase: string) => recordedPhase(repo, ns.name, name, phase);

const secretYaml = (password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-credentials\ntype: Opaque\nstringData:\n  password: ${JSON.stringify(password)}\n`;

/** The deployer, the target Secret holding `password`, and the namespace's age key (the team's). */
async function setUp(password: string): Promise<void> {
  await serviceAccount(clients.admin, ns.name, 'deployer', SECRETS);
  await clients.admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'web-credentials', namespace: ns.name },
    type: 'Opaque',
    stringData: { password },
  });
  await clients.admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'janus-sops-age', namespace: ns.name },
    stringData: { 'team.agekey': `# public key: ${team.recipient}\n${team.identity}\n` },
  });
}

/** sops encrypt of the Secret with `password`, only its data and stringData encrypted. */
const encryptedSecret = (password: string, recipient: string) =>
  sopsEncrypt(secretYaml(password), {
    recipients: [recipient],
    flags: ['--encrypted-regex', '^(data|stringData)$'],
  });

const secretData = () => secretDataOf(clients.admin, ns.name, 'web-credentials');
const everythingJanusWrote = (repo: TestRepo, logs: string) =>
  everythingWritten(clients.admin, ns.name, repo.bare, logs);

describe('SOPS-encrypted change files', () => {
  it('commit a Secret rotation with the namespace age key, roll it back exactly, and write no plaintext', async () => {
    const before = `old-${randomBytes(8).toString('hex')}`;
    const rotated = `new-${randomBytes(8).toString('hex')}`;
    await setUp(before);
    const encrypted = encryptedSecret(rotated, team.recipient);
    expect(encrypted).not.toContain(rotated);

    const repo = await createTestRepo(gitServer.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(directory('rotate', { changes: { '10-credentials.update.sops.yaml': encrypted } }));
    await recorded(repo, 'rotate', 'Committed');
    expect(await secretData()).toEqual({ password: rotated });

    const txn = await clients.admin.get<KubeObject & { spec: { changes: { sopsContent?: string }[] } }>({
      apiVersion: 'tx.janus.io/v1alpha1',
      kind: 'Transaction',
      namespace: ns.name,
      name: 'rotate',
    });
    expect(txn.spec.changes[0]?.sopsContent).toBe(encrypted);

    await repo.push({ 'transactions/rotate/ROLLBACK': 'rotation broke login\n' }, 'roll back rotate');
    await recorded(repo, 'rotate', 'RolledBack');
    expect(await secretData()).toEqual({ password: before });

    expectNowhere(await everythingJanusWrote(repo, await run.logs()), [before, rotated]);
  });

  it("refuses a file encrypted for another team's key, naming the file and not the value", async () => {
    await setUp('unchanged');
    const theirs = `theirs-${randomBytes(8).toString('hex')}`;
    const encrypted = encryptedSecret(theirs, otherTeam.recipient);
    const repo = await createTestRepo(gitServer.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(directory('steal', { changes: { '10-credentials.update.sops.yaml': encrypted } }));
    const result = await recorded(repo, 'steal', 'Failed');
    expect(String(result.message)).toContain('none of the age keys available decrypts it');
    expect(String(result.message)).toContain(otherTeam.recipient);
    expect(await secretData()).toEqual({ password: 'unchanged' });
    expectNowhere(await everythingJanusWrote(repo, await run.logs()), [theirs]);
  });

  it('janus plan decrypts only as an identity that may read the key; janus validate checks offline', async () => {
    await setUp('before-plan');
    await serviceAccount(clients.admin, ns.name, 'outsider', [
      {
        apiGroups: [''],
        resources: ['secrets'],
        verbs: ['get', 'update'],
        resourceNames: ['web-credentials'],
      },
    ]);
    const planned = `planned-${randomBytes(8).toString('hex')}`;
    const encrypted = encryptedSecret(planned, team.recipient);
    const repo = await mkdtemp(join(tmpdir(), 'janus-sops-plan-'));
    try {
      const header = (sa: string) =>
        `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: rotate\n  namespace: ${ns.name}\nspec:\n  serviceAccountName: ${sa}\n`;
      for (const [dir, sa] of [
        ['ok', 'deployer'],
        ['denied', 'outsider'],
      ] as const) {
        await mkdir(join(repo, dir, 'rotate'), { recursive: true });
        await writeFile(join(repo, dir, 'rotate', 'transaction.yaml'), header(sa));
        await writeFile(join(repo, dir, 'rotate', '10-credentials.update.sops.yaml'), encrypted);
      }
      const env = { JANUS_ALLOWED_NAMESPACES: ns.name, JANUS_ALLOWED_SERVICE_ACCOUNTS: 'deployer,outsider' };
      const opts = { kubeconfig: clients.kubeconfigs.admin, env };

      const ok = await janusCli(['plan', join(repo, 'ok', 'rotate')], opts);
      expect(ok.stderr).toMatch(/\[0\] Update v1 Secret \S+\/web-credentials: would change/);
      expect(ok.code).toBe(1);
      const denied = await janusCli(['plan', join(repo, 'denied', 'rotate')], opts);
      expect(denied.stderr).toMatch(/REFUSED[\s\S]*may not read Secret "\S+\/janus-sops-age"/);
      expect(denied.code).toBe(2);
      for (const output of [ok.stdout, ok.stderr, denied.stdout, denied.stderr])
        expectNowhere(output, [planned]);

      const valid = await janusCli(['validate', join(repo, 'ok', 'rotate')], opts);
      expect(valid.code).toBe(0);
      await writeFile(
        join(repo, 'ok', 'rotate', '10-credentials.update.sops.yaml'),
        encrypted.replace(/password: ENC\[[^\]]*\]/, 'password: in-clear'),
      );
      const invalid = await janusCli(['validate', join(repo, 'ok', 'rotate')], opts);
      expect(invalid.stderr).toMatch(
        /10-credentials.update.sops.yaml:7:\d+: stringData.password: is not a sops value/,
      );
      expect(invalid.code).not.toBe(0);
      expect(await secretData()).toEqual({ password: 'before-plan' });
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});
