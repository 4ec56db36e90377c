/** The repository's policy as configured: safe defaults, refused settings, and the pure checks. */
import { describe, expect, it } from 'vitest';
import {
  describePolicy,
  namespaceRefusal,
  PolicyError,
  type PolicySettings,
  rejectionNamespace,
  repositoryPolicy,
  serviceAccountRefusal,
} from '../../../src/gitops/index.ts';

const refusal = (settings: PolicySettings): PolicyError => {
  try {
    repositoryPolicy(settings);
  } catch (e) {
    if (e instanceof PolicyError) return e;
    throw e;
  }
  throw new Error(`accepted: ${JSON.stringify(settings)}`);
};

describe('repositoryPolicy: what is configured', () => {
  it('allows the default namespace only, and no ServiceAccount, when nothing is configured', () => {
    for (const unset of [undefined, '', ' , ', []]) {
      const policy = repositoryPolicy({
        defaultNamespace: 'shop',
        allowedNamespaces: unset,
        allowedServiceAccounts: unset,
      });
      expect(policy).toEqual({
        defaultNamespace: 'shop',
        namespaces: ['shop'],
        serviceAccounts: [],
        controllerNamespace: 'janus-system',
        sopsKinds: [],
      });
    }
  });

  it('takes comma-separated lists, trimmed and without repeats, or arrays', () => {
    const policy = repositoryPolicy({
      defaultNamespace: 'shop',
      allowedNamespaces: ' shop, payments ,,payments',
      allowedServiceAccounts: 'deployer, payments/ci,deployer',
    });
    expect(describePolicy(policy)).toEqual({
      defaultNamespace: 'shop',
      namespaces: ['shop', 'payments'],
      serviceAccounts: ['deployer', 'payments/ci'],
      controllerNamespace: 'janus-system',
      sopsKinds: ['Secret'],
      clusterKinds: 'unset',
    });
    expect(policy.serviceAccounts).toEqual([{ name: 'deployer' }, { namespace: 'payments', name: 'ci' }]);
    expect(
      repositoryPolicy({
        defaultNamespace: 'a',
        allowedNamespaces: ['a', 'b'],
        allowedServiceAccounts: ['x'],
      }),
    ).toMatchObject({ namespaces: ['a', 'b'], serviceAccounts: [{ name: 'x' }] });
  });

  it('takes the list as complete: the default namespace is allowed only if listed', () => {
    const policy = repositoryPolicy({ defaultNamespace: 'default', allowedNamespaces: 'team-a' });
    expect(policy.namespaces).toEqual(['team-a']);
  });

  it("refuses the controller's namespace and kube-* wherever they are named, naming flag and variable", () => {
    expect(refusal({ defaultNamespace: 'default', allowedNamespaces: 'shop,janus-system' })).toMatchObject({
      setting: 'namespaces',
      message:
        '--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "janus-system" is the controller\'s own namespace: ' +
        'no repository may use it',
    });
    expect(refusal({ defaultNamespace: 'default', allowedNamespaces: 'kube-node-lease' }).message).toBe(
      '--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "kube-node-lease" is a Kubernetes system namespace ' +
        '(kube-*): no repository may use it',
    );
    expect(refusal({ defaultNamespace: 'kube-system' })).toMatchObject({
      setting: 'defaultNamespace',
      message: expect.stringMatching(/^--default-namespace \(JANUS_DEFAULT_NAMESPACE\): "kube-system" is a /),
    });
    // The controller's namespace is whatever it is configured to be.
    expect(refusal({ defaultNamespace: 'ops', controllerNamespace: 'ops' }).setting).toBe('defaultNamespace');
    expect(
      repositoryPolicy({ defaultNamespace: 'janus-system', controllerNamespace: 'ops' }).namespaces,
    ).toEqual(['janus-system']);
    expect(
      refusal({ defaultNamespace: 'default', allowedServiceAccounts: 'janus-system/janus-controller' }),
    ).toMatchObject({
      setting: 'serviceAccounts',
      message: expect.stringContaining('"janus-system" is the controller\'s own namespace'),
    });
  });

  it('has no wildcard', () => {
    expect(refusal({ defaultNamespace: 'default', allowedNamespaces: '*' }).message).toBe(
      '--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "*": there is no wildcard; name each namespace',
    );
    for (const entry of ['*', 'shop/*', '*/deployer']) {
      expect(refusal({ defaultNamespace: 'shop', allowedServiceAccounts: entry }).message).toContain(
        'there is no wildcard',
      );
    }
  });

  it('refuses malformed entries, and a namespace/name outside the allowed namespaces', () => {
    expect(refusal({ defaultNamespace: 'default', allowedNamespaces: 'Shop' }).message).toMatch(
      /^--allowed-namespaces \(JANUS_ALLOWED_NAMESPACES\): "Shop" must be a DNS-1123 label/,
    );
    expect(refusal({ defaultNamespace: 'default', allowedServiceAccounts: 'a/b/c' }).message).toBe(
      '--allowed-service-accounts (JANUS_ALLOWED_SERVICE_ACCOUNTS): "a/b/c": expected name or namespace/name',
    );
    expect(
      refusal({ defaultNamespace: 'default', allowedServiceAccounts: 'default/Bad_SA' }).message,
    ).toContain('"default/Bad_SA": the name must be a DNS-1123 subdomain');
    expect(refusal({ defaultNamespace: 'default', allowedServiceAccounts: 'shop/deployer' }).message).toBe(
      '--allowed-service-accounts (JANUS_ALLOWED_SERVICE_ACCOUNTS): "shop/deployer": "shop" is not an ' +
        'allowed namespace (allowed: default); add it to --allowed-namespaces',
    );
  });
});

describe('the checks', () => {
  const policy = repositoryPolicy({
    defaultNamespace: 'shop',
    allowedNamespaces: 'shop,payments',
    allowedServiceAccounts: 'deployer,payments/ci',
  });

  it('allows exactly the listed namespaces, never the reserved ones', () => {
    expect(namespaceRefusal(policy, 'shop')).toBeUndefined();
    expect(namespaceRefusal(policy, 'payments')).toBeUndefined();
    expect(namespaceRefusal(policy, 'prod')).toBe(
      'is not allowed for this repository (allowed: shop, payments; set by --allowed-namespaces or ' +
        'JANUS_ALLOWED_NAMESPACES)',
    );
    expect(namespaceRefusal(policy, 'janus-system')).toBe(
      "is the controller's own namespace: no repository may use it",
    );
    expect(namespaceRefusal(policy, 'kube-system')).toBe(
      'is a Kubernetes system namespace (kube-*): no repository may use it',
    );
  });

  it('allows a ServiceAccount by name in every namespace, by namespace/name in that one only', () => {
    expect(serviceAccountRefusal(policy, 'shop', 'deployer')).toBeUndefined();
    expect(serviceAccountRefusal(policy, 'payments', 'deployer')).toBeUndefined();
    expect(serviceAccountRefusal(policy, 'payments', 'ci')).toBeUndefined();
    expect(serviceAccountRefusal(policy, 'shop', 'ci')).toBe(
      'ServiceAccount "shop/ci" is not allowed for this repository (allowed: deployer, payments/ci; ' +
        'set by --allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS)',
    );
    expect(serviceAccountRefusal(policy, 'shop', 'default')).toContain('"shop/default" is not allowed');
  });

  it('allows no ServiceAccount at all by default, and says how to grant one', () => {
    const none = repositoryPolicy({ defaultNamespace: 'default' });
    expect(serviceAccountRefusal(none, 'default', 'deployer')).toBe(
      'ServiceAccount "default/deployer" is not allowed for this repository: it may use no ServiceAccount ' +
        'until an administrator grants one with --allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS ' +
        '(e.g. "deployer" in every allowed namespace, or "default/deployer")',
    );
  });
});

describe("rejectionNamespace: where a rejected directory's record is filed and notified", () => {
  const policy = repositoryPolicy({ defaultNamespace: 'shop', allowedNamespaces: 'shop,payments' });

  it('is the namespace the directory names when the repository may use it', () => {
    expect(rejectionNamespace(policy, 'payments')).toEqual({ namespace: 'payments' });
  });

  it("is the controller's, as the repository's own, for any namespace the policy refuses", () => {
    // A pusher names another team's namespace: that team's routes must not hear of it.
    expect(rejectionNamespace(policy, 'bob')).toEqual({ namespace: 'janus-system', refused: 'bob' });
    expect(rejectionNamespace(policy, 'kube-system')).toEqual({
      namespace: 'janus-system',
      refused: 'kube-system',
    });
    expect(rejectionNamespace(policy, 'janus-system')).toEqual({
      namespace: 'janus-system',
      refused: 'janus-system',
    });
    // A default namespace left out of an explicit list is refused as well.
    const narrow = repositoryPolicy({ defaultNamespace: 'default', allowedNamespaces: 'shop' });
    expect(rejectionNamespace(narrow, 'default')).toEqual({ namespace: 'janus-system', refused: 'default' });
  });
});
