import { describe, expect, it } from 'vitest';
import {
  memoryReader,
  type ParseOptions,
  parseTransactionDirectory,
  repositoryPolicy,
} from '../../../src/gitops/index.ts';

const DIR = 'transactions/deploy-v2';
const OPTIONS: ParseOptions = {
  policy: repositoryPolicy({
    defaultNamespace: 'default',
    allowedNamespaces: 'default,team-a,other',
    allowedServiceAccounts: 'deploy-sa',
  }),
};

const header = (extra = '') => `apiVersion: tx.janus.io/v1alpha1
kind: Transaction
metadata:
  name: deploy-v2
${extra}spec:
  serviceAccountName: deploy-sa
`;

async function parse(files: Record<string, string>, options: ParseOptions = OPTIONS) {
  const prefixed = Object.fromEntries(Object.entries(files).map(([name, text]) => [`${DIR}/${name}`, text]));
  return parseTransactionDirectory(memoryReader(prefixed), DIR, options, {
    repository: 'https://git.example.com/platform/deploys.git',
    branch: 'main',
    commit: 'a'.repeat(40),
    sequence: 12,
  });
}

describe('parseTransactionDirectory: a valid directory', () => {
  it('carries spec.health, the bake window (stableFor, 0s allowed) included', async () => {
    for (const stableFor of ['45s', '0s']) {
      const result = await parse({
        'transaction.yaml': `${header()}  health:\n    timeout: 2m\n    stableFor: ${stableFor}\n`,
        '10-web.patch.yaml':
          'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n',
      });
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.transaction.spec.health).toEqual({ timeout: '2m', stableFor });
    }
  });

  it('carries spec.health.analysis with its bake window', async () => {
    const result = await parse({
      'transaction.yaml': `${header()}  health:\n    stableFor: 5m\n    analysis:\n      - templateRef: {name: error-rate, namespace: platform}\n        args: [{name: service, value: web}]\n`,
      '10-web.patch.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n',
    });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.transaction.spec.health?.analysis).toEqual([
        {
          templateRef: { name: 'error-rate', namespace: 'platform' },
          args: [{ name: 'service', value: 'web' }],
        },
      ]);
    }
  });

  it('orders inline changes first, then change files lexicographically, documents in file order', async () => {
    const result = await parse({
      'transaction.yaml': `${header()}  lockTimeout: 2m
  timeout: 1h30m
  changes:
  - target: {apiVersion: v1, kind: ConfigMap, name: inline-cfg}
    type: Update
    content: {apiVersion: v1, kind: ConfigMap, metadata: {name: inline-cfg}, data: {k: v}}
`,
      '20-web.patch.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n',
      '10-old.delete.yaml':
        'apiVersion: v1\nkind: Secret\nmetadata: {name: old, namespace: other}\ndata: {x: eA==}\n---\n' +
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: old-role}\n',
      '15-new.create.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {a: "1"}\n',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { spec } = result.transaction;
    expect(spec.changes.map((c) => `${c.type} ${c.target.kind}/${c.target.name}`)).toEqual([
      'Update ConfigMap/inline-cfg',
      'Delete Secret/old',
      'Delete ClusterRole/old-role',
      'Create ConfigMap/new',
      'Patch Deployment/web',
    ]);
    expect(spec.lockTimeout).toBe('2m');
    expect(spec.timeout).toBe('1h30m');
    expect(spec.serviceAccountName).toBe('deploy-sa');
  });

  it('sends the manifest as content, but nothing for a Delete', async () => {
    const result = await parse({
      'transaction.yaml': header(),
      '10-old.delete.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: old}\ndata: {x: eA==}\n',
      '20-web.patch.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n',
    });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const [remove, patch] = result.transaction.spec.changes;
    expect(remove).toEqual({ type: 'Delete', target: { apiVersion: 'v1', kind: 'Secret', name: 'old' } });
    expect(patch?.content).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 3 },
    });
  });

  it('reads 0644 as octal (420) like kubectl, and keeps yes/on as strings', async () => {
    const result = await parse({
      'transaction.yaml': header(),
      '10-cfg.update.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {enabled: yes, mode: on}\n---\n' +
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n' +
        'spec: {template: {spec: {volumes: [{name: v, secret: {secretName: s, defaultMode: 0644}}]}}}\n',
    });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const [cfg, web] = result.transaction.spec.changes;
    expect(cfg?.content?.data).toEqual({ enabled: 'yes', mode: 'on' });
    expect(JSON.stringify(web?.content)).toContain('"defaultMode":420');
  });

  it('takes the namespace from transaction.yaml, else the configured default', async () => {
    const explicit = await parse({
      'transaction.yaml': header('  namespace: team-a\n'),
      '10-a.delete.yaml': cm('a'),
    });
    const defaulted = await parse({ 'transaction.yaml': header(), '10-a.delete.yaml': cm('a') });
    expect(explicit.ok && explicit.transaction.metadata.namespace).toBe('team-a');
    expect(defaulted.ok && defaulted.transaction.metadata.namespace).toBe('default');
  });

  it('records the source as annotations and keeps the user’s labels and annotations', async () => {
    const result = await parse({
      'transaction.yaml': header('  labels: {team: a}\n  annotations: {owner: alice}\n'),
      '10-a.delete.yaml': cm('a'),
    });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.transaction.metadata).toEqual({
      name: 'deploy-v2',
      namespace: 'default',
      labels: { team: 'a' },
      annotations: {
        owner: 'alice',
        'tx.janus.io/source-repository': 'https://git.example.com/platform/deploys.git',
        'tx.janus.io/source-revision': `main@sha1:${'a'.repeat(40)}`,
        'tx.janus.io/source-path': DIR,
        'tx.janus.io/source-sequence': '12',
      },
    });
    expect(result.transaction.apiVersion).toBe('tx.janus.io/v1alpha1');
    expect(result.transaction.kind).toBe('Transaction');
  });

  it('reports a ROLLBACK file as a rollback request with its text as the reason, not as a change', async () => {
    const result = await parse({
      'transaction.yaml': header(),
      '10-a.delete.yaml': cm('a'),
      ROLLBACK: '  error rate doubled after deploy\n',
    });
    expect(result.ok).toBe(true);
    expect(result.rollback).toEqual({ reason: 'error rate doubled after deploy', file: `${DIR}/ROLLBACK` });
    expect(result.ok && result.transaction.spec.changes).toHaveLength(1);
  });

  it('skips empty documents (a leading or trailing ---)', async () => {
    const result = await parse({ 'transaction.yaml': header(), '10-a.delete.yaml': `---\n${cm('a')}---\n` });
    expect(result.ok && result.transaction.spec.changes).toHaveLength(1);
  });
});

function cm(name: string, namespace?: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}`;
}
