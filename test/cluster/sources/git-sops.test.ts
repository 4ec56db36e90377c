/**
 * SOPS files in sources end to end (docs/sources.md, "Secrets"), with the real sops, kustomize and
 * helm in `janus run`: a Kustomize overlay whose secretGenerator is fed by an encrypted dotenv file
 * and a Helm chart with an encrypted values file, committed and applied with the namespace's age
 * key read as the source's ServiceAccount. The Secrets hold the values in the cluster, and neither
 * value appears anywhere Janus writes: the Transactions (their Secrets are `sopsContent`), the
 * Sources, Events, the results branch, `janus run`'s log. Without the key, the render fails naming
 * the file: when its ServiceAccount may not read the key, and when there is none.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  everythingJanusWrote,
  expectNowhere,
  secretData as secretDataOf,
} from '../../support/cluster/plaintext.ts';
import { ALL_ON_CONFIGMAPS, grantRole, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';
import { createTestRepo, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  ageKeySecret as ageKeySecretOf,
  attempted,
  declaration,
  SOURCE_DEPLOYER,
  sourceFlags,
  untilSource,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-sops');
const gitServer = useGitServer();
const janus = useJanus(clients);

let team: AgeKey;
let spare: AgeKey;
let stranger: AgeKey;
beforeAll(async () => {
  sopsBinaries();
  [team, spare, stranger] = await Promise.all([newAgeKey(), newAgeKey(), newAgeKey()]);
}, 600_000);

function overlay(token: string): Record<string, string> {
  return {
    'deploy/app/kustomization.yaml': [
      'resources:',
      '- config.yaml',
      'secretGenerator:',
      '- name: app-env',
      '  envs:',
      '  - app.env',
      '  options:',
      '    disableNameSuffixHash: true',
      '',
    ].join('\n'),
    'deploy/app/config.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  mode: prod\n',
    'deploy/app/app.env': sopsEncrypt(`API_TOKEN=${token}\nREGION=eu-west\n`, {
      recipients: [team.recipient],
      format: 'env',
    }),
  };
}

function chart(password: string): Record<string, string> {
  return {
    'charts/db/Chart.yaml': 'apiVersion: v2\nname: db\nversion: 1.0.0\n',
    'charts/db/values.yaml': 'db:\n  user: shop\n',
    'charts/db/secrets.yaml': sopsEncrypt(`db:\n  password: ${password}\n`, { recipients: [team.recipient] }),
    // Pushed by someone who holds only the namespace's public key, encrypted to it and to their own.
    'charts/db/extra.yaml': sopsEncrypt('db:\n  tier: gold\n', {
      recipients: [team.recipient, stranger.recipient],
    }),
    'charts/db/templates/secret.yaml': `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-credentials
stringData:
  user: {{ .Values.db.user }}
  password: {{ .Values.db.password | quote }}
`,
  };
}

const sources = (namespace: string) => ({
  ...declaration('app', namespace, { path: 'deploy/app', kustomize: {}, prune: true }),
  ...declaration('db', namespace, {
    path: 'charts/db',
    helm: { valuesFiles: ['values.yaml', 'secrets.yaml', 'extra.yaml'] },
    prune: true,
  }),
});

const ageKeySecret = (namespace: string) => ageKeySecretOf(clients.admin, namespace, team);

const secretData = (name: string) => secretDataOf(clients.admin, ns.name, name);

describe('SOPS files in sources', () => {
  it('applies an overlay fed by an encrypted env file and a chart with an encrypted values file, and writes no plaintext', {
    timeout: 600_000,
  }, async () => {
    const token = `token-${randomBytes(8).toString('hex')}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    // The namespace holds two keys: the Transactions are sealed to both.
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'janus-sops-age', namespace: ns.name },
      stringData: {
        'team.agekey': `# public key: ${team.recipient}\n${team.identity}\n`,
        'spare.agekey': `# public key: ${spare.recipient}\n${spare.identity}\n`,
      },
    });
    const repo = await createTestRepo(gitServer.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags(),
      logLevel: 'debug',
    });
    const commit = await repo.push({ ...sources(ns.name), ...overlay(token), ...chart(password) });

    const app = await waitForPhase(clients.admin, ns.name, `app-${commit.slice(0, 7)}`, 'Committed', 240_000);
    const db = await waitForPhase(clients.admin, ns.name, `db-${commit.slice(0, 7)}`, 'Committed', 240_000);
    expect(await secretData('app-env')).toEqual({ API_TOKEN: token, REGION: 'eu-west' });
    expect(await secretData('db-credentials')).toEqual({ user: 'shop', password });

    // The Secrets are in the Transactions encrypted, to the namespace keys' recipients only (not to
    // extra.yaml's stranger); the ConfigMap in clear.
    const described = (txn: Transaction) =>
      txn.spec.changes.map(
        (c) => `${c.type} ${c.target.kind} ${c.target.name} ${c.sopsContent ? 'sops' : 'clear'}`,
      );
    expect(described(app)).toEqual(['Apply Secret app-env sops', 'Apply ConfigMap app-config clear']);
    expect(described(db)).toEqual(['Apply Secret db-credentials sops']);
    const sealedTo = (txn: Transaction) =>
      txn.spec.changes
        .filter((c) => c.sopsContent !== undefined)
        .map((c) =>
          (parse(c.sopsContent ?? '') as { sops: { age: { recipient: string }[] } }).sops.age
            .map((a) => a.recipient)
            .sort(),
        );
    const namespaceKeys = [team.recipient, spare.recipient].sort();
    expect(sealedTo(db)).toEqual([namespaceKeys]);
    expect(sealedTo(app)).toEqual([namespaceKeys]);
    await untilSource(clients.admin, ns.name, 'app', attempted(commit, 'Committed'));
    await untilSource(clients.admin, ns.name, 'db', attempted(commit, 'Committed'));

    expectNowhere(await everythingJanusWrote(clients.admin, ns.name, repo.bare, await run.logs()), [
      token,
      password,
    ]);
  });

  it('fails the render naming the encrypted file when the ServiceAccount may not read the key, or there is none', {
    timeout: 600_000,
  }, async () => {
    // The deployer may write ConfigMaps only: it may not read janus-sops-age.
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await ageKeySecret(ns.name);
    const repo = await createTestRepo(gitServer.server);
    await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags() });
    const db = declaration('db', ns.name, {
      path: 'charts/db',
      helm: { valuesFiles: ['values.yaml', 'secrets.yaml'] },
    });
    const first = await repo.push({ ...db, ...chart('never-applied') });
    const forbidden = await untilSource(clients.admin, ns.name, 'db', attempted(first, 'RenderFailed'));
    expect(forbidden.status?.lastAttempted?.reason).toContain(
      `charts/db/secrets.yaml is SOPS-encrypted, and system:serviceaccount:${ns.name}:deployer may not read Secret "${ns.name}/janus-sops-age"`,
    );

    // Now it may read Secrets, and there is no key.
    await clients.admin.delete({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: ns.name,
      name: 'janus-sops-age',
    });
    await grantRole(
      clients.admin,
      ns.name,
      'secrets',
      [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
      {
        kind: 'ServiceAccount',
        name: 'deployer',
        namespace: ns.name,
      },
    );
    const second = await repo.push({ 'charts/db/values.yaml': 'db:\n  user: shop2\n' });
    const missing = await untilSource(clients.admin, ns.name, 'db', attempted(second, 'RenderFailed'));
    expect(missing.status?.lastAttempted?.reason).toContain(
      `charts/db/secrets.yaml is SOPS-encrypted, and Secret "${ns.name}/janus-sops-age", which holds the age keys for SOPS-encrypted changes, does not exist`,
    );
  });
});
