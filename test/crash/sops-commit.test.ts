/**
 * A SOPS-encrypted Secret update killed around the reads of the namespace's age key Secret, the
 * writes that use them, and at its stage boundaries: decryption is redone, never remembered, so
 * every restart ends exactly where the uninterrupted run ends, the Secret holding the decrypted
 * value once. Every other request is killed in memory (test/unit/crash/changes.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, Objects } from '../../src/kube/resources.ts';
import { useClients } from '../support/cluster/kube.ts';
import { serviceAccount, testNamespace, transaction } from '../support/cluster/saga.ts';
import type { Scenario } from '../support/crash/crash.ts';
import { expectAllCrashed, expectEndsAsBaseline, killedAtPoints } from '../support/crash/crash.ts';
import { appliedBy } from '../support/crash/crash-scenarios.ts';
import { killPoints, type PointSpec } from '../support/crash/request-log.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../support/servers/sops.ts';

const clients = useClients();
const freshNamespace = (label: string) => testNamespace(clients.admin, `crash-sops-${label}`);

let key: AgeKey;
let encrypted: string;
beforeAll(async () => {
  sopsBinaries(); // a cold build takes minutes: here, not in the test's timeout
  key = await newAgeKey();
  encrypted = sopsEncrypt(
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ntype: Opaque\nstringData:\n  password: rotated\n',
    { recipients: [key.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
  );
}, 600_000);

function sopsScenario(admin: Objects): Scenario {
  return {
    phase: 'Committed',
    async setup(namespace) {
      await serviceAccount(admin, namespace, 'deployer', [
        { apiGroups: [''], resources: ['secrets'], verbs: ['*'] },
      ]);
      const secret = (name: string, stringData: Record<string, string>) =>
        admin.create({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace },
          type: 'Opaque',
          stringData,
        });
      await secret('creds', { password: 'before' });
      await secret('janus-sops-age', { 'team.agekey': key.identity });
    },
    transaction(namespace) {
      return transaction(namespace, 'crashy', [
        {
          target: { apiVersion: 'v1', kind: 'Secret', name: 'creds' },
          type: 'Update',
          sopsContent: encrypted,
        },
      ]);
    },
    async observe(namespace) {
      const secret = await admin.get<KubeObject & { data?: Record<string, string> }>({
        apiVersion: 'v1',
        kind: 'Secret',
        name: 'creds',
        namespace,
      });
      return {
        password: Buffer.from(secret.data?.password ?? '', 'base64').toString('utf8'),
        appliedBy: appliedBy(secret),
      };
    },
  };
}

const POINTS: PointSpec[] = [
  { name: 'key read for the dry run', phase: 'Preparing', method: 'GET', path: '/secrets/janus-sops-age' },
  { name: 'dry run', phase: 'Preparing', method: 'PUT', path: '/secrets/creds' },
  { name: 'store written', phase: 'Preparing', method: 'POST', path: '/secrets', asServiceAccount: false },
  { name: 'key read for the commit', phase: 'Committing', method: 'GET', path: '/secrets/janus-sops-age' },
  { name: 'Update committed', phase: 'Committing', method: 'PUT', path: '/secrets/creds' },
];

describe('a SOPS-encrypted Secret update killed at each of its steps', () => {
  it('ends exactly as an uninterrupted run does, wherever it dies', { timeout: 1_200_000 }, async () => {
    const { baseline, outcomes } = await killedAtPoints(
      clients.admin,
      clients.kubeconfigs.controller,
      sopsScenario(clients.admin),
      freshNamespace,
      'sops-commit',
      (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.targets).toMatchObject({ password: 'rotated' });
        // The key is read as part of the saga: once for the dry run, once for the commit.
        expect(baseline.log.match(/"path":"[^"]*\/secrets\/janus-sops-age"/g)).toHaveLength(2);
        return killPoints(baseline.log, POINTS);
      },
    );
    expectAllCrashed(outcomes);
    expectEndsAsBaseline(outcomes, baseline);
  });
});
