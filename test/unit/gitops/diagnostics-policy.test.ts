/** What the repository's policy refuses in a directory, each at the file and line to fix. */
import { describe, expect, it } from 'vitest';
import { memoryReader, parseTransactionDirectory, repositoryPolicy } from '../../../src/gitops/index.ts';
import { at, configMap, diagnose, header } from './diagnose.ts';

const SHOP = {
  policy: repositoryPolicy({
    defaultNamespace: 'shop',
    allowedNamespaces: 'shop,payments',
    allowedServiceAccounts: 'deploy-sa,payments/ci',
  }),
};
const inNamespace = (namespace: string) => `  namespace: ${namespace}\n`;
const cmIn = (namespace: string, name = 'cfg') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`;

describe('the policy in a transaction directory', () => {
  it('accepts what the policy grants: allowed namespaces, ServiceAccounts by name or namespace/name', async () => {
    const files = {
      'transactions/deploy-v2/transaction.yaml': header('deploy-v2', inNamespace('payments')).replace(
        'deploy-sa',
        'ci',
      ),
      'transactions/deploy-v2/10-a.patch.yaml': configMap,
      'transactions/deploy-v2/20-b.patch.yaml': cmIn('shop', 'other'),
      // Cluster-scoped targets stay allowed: the ServiceAccount's RBAC bounds them.
      'transactions/deploy-v2/30-ns.delete.yaml':
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-old\n',
    };
    const result = await parseTransactionDirectory(memoryReader(files), 'transactions/deploy-v2', SHOP);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.transaction.metadata.namespace).toBe('payments');
    expect(result.transaction.spec.serviceAccountName).toBe('ci');
  });

  it('refuses the default policy: no ServiceAccount, at spec.serviceAccountName', async () => {
    const policy = repositoryPolicy({ defaultNamespace: 'default' });
    const diagnostics = await diagnose(
      { 'transaction.yaml': header(), '10-a.patch.yaml': configMap },
      { policy },
    );
    expect(diagnostics).toEqual([
      at('transaction.yaml', {
        code: 'service-account-not-allowed',
        field: 'spec.serviceAccountName',
        line: 6,
        column: 23,
      }),
    ]);
    expect(diagnostics[0]?.message).toContain('--allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS');
  });

  it('refuses only the default namespace by default: another one is refused at metadata.namespace', async () => {
    const policy = repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'deploy-sa' });
    const diagnostics = await diagnose(
      { 'transaction.yaml': header('deploy-v2', inNamespace('prod')), '10-a.patch.yaml': configMap },
      { policy },
    );
    expect(diagnostics).toEqual([
      at('transaction.yaml', {
        code: 'namespace-not-allowed',
        field: 'metadata.namespace',
        line: 5,
        column: 14,
      }),
    ]);
    expect(diagnostics[0]?.message).toBe(
      'namespace "prod" is not allowed for this repository (allowed: default; set by --allowed-namespaces or ' +
        'JANUS_ALLOWED_NAMESPACES)',
    );
  });

  it("refuses the controller's namespace and kube-* for the Transaction", async () => {
    for (const [namespace, reason] of [
      ['janus-system', "is the controller's own namespace"],
      ['kube-system', 'is a Kubernetes system namespace (kube-*)'],
      ['kube-public', 'is a Kubernetes system namespace (kube-*)'],
    ]) {
      const diagnostics = await diagnose(
        {
          'transaction.yaml': header('deploy-v2', inNamespace(namespace ?? '')),
          '10-a.patch.yaml': configMap,
        },
        SHOP,
      );
      expect(diagnostics).toEqual([
        at('transaction.yaml', {
          code: 'namespace-not-allowed',
          line: 5,
          message: `namespace "${namespace}" ${reason}: no repository may use it`,
        }),
      ]);
    }
  });

  it('refuses a ServiceAccount granted by namespace/name in another namespace', async () => {
    const diagnostics = await diagnose(
      { 'transaction.yaml': header().replace('deploy-sa', 'ci'), '10-a.patch.yaml': configMap },
      SHOP,
    );
    expect(diagnostics).toEqual([
      at('transaction.yaml', {
        code: 'service-account-not-allowed',
        field: 'spec.serviceAccountName',
        line: 6,
        column: 23,
        message:
          'ServiceAccount "shop/ci" is not allowed for this repository (allowed: deploy-sa, payments/ci; ' +
          'set by --allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS)',
      }),
    ]);
  });

  it('reports a refused namespace and a refused ServiceAccount together', async () => {
    const policy = repositoryPolicy({ defaultNamespace: 'default' });
    const diagnostics = await diagnose(
      { 'transaction.yaml': header('deploy-v2', inNamespace('kube-system')), '10-a.patch.yaml': configMap },
      { policy },
    );
    expect(diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['namespace-not-allowed', 5],
      ['service-account-not-allowed', 7],
    ]);
  });

  it('refuses targets in namespaces the repository may not use, at their namespace field', async () => {
    const diagnostics = await diagnose(
      {
        'transaction.yaml': `${header()}  changes:
  - target: {apiVersion: v1, kind: ConfigMap, name: inline, namespace: janus-system}
    type: Delete
`,
        '10-a.patch.yaml': configMap,
        '20-b.patch.yaml': cmIn('prod'),
        '30-c.update.yaml': `${cmIn('payments')}---\n${cmIn('kube-system', 'coredns')}`,
      },
      SHOP,
    );
    expect(diagnostics).toEqual([
      at('20-b.patch.yaml', {
        code: 'target-namespace-not-allowed',
        field: 'metadata.namespace',
        line: 5,
        column: 14,
        message:
          'the target\'s namespace "prod" is not allowed for this repository (allowed: shop, payments; ' +
          'set by --allowed-namespaces or JANUS_ALLOWED_NAMESPACES)',
      }),
      at('30-c.update.yaml', {
        code: 'target-namespace-not-allowed',
        document: 2,
        field: 'metadata.namespace',
        line: 11,
        column: 14,
        message:
          'the target\'s namespace "kube-system" is a Kubernetes system namespace (kube-*): no repository may use it',
      }),
      at('transaction.yaml', {
        code: 'target-namespace-not-allowed',
        field: 'spec.changes[0].target.namespace',
        line: 8,
        column: 72,
        message: expect.stringContaining('"janus-system" is the controller\'s own namespace'),
      }),
    ]);
  });

  it('reports a Transaction in a refused namespace once, not again for each target it defaults', async () => {
    const diagnostics = await diagnose(
      { 'transaction.yaml': header('deploy-v2', inNamespace('prod')), '10-a.patch.yaml': configMap },
      SHOP,
    );
    expect(diagnostics.map((d) => d.code)).toEqual(['namespace-not-allowed']);
  });
});
