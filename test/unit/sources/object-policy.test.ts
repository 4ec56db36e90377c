/**
 * Every rendered object against the repository's policy: namespaces resolved (the source's for
 * those without one, none on cluster-scoped ones), the namespace allowed, a cluster-scoped kind
 * listed in --allowed-cluster-kinds, a Namespace only one the repository may use.
 */
import { describe, expect, it } from 'vitest';
import { PolicyError, repositoryPolicy } from '../../../src/gitops/policy.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { checkRenderedObjects, MAX_REFUSALS, scopesFromRender } from '../../../src/sources/object-policy.ts';

const policy = repositoryPolicy({
  defaultNamespace: 'shop',
  allowedNamespaces: 'shop,payments',
  controllerNamespace: 'janus-system',
});
const listing = repositoryPolicy({
  defaultNamespace: 'shop',
  allowedNamespaces: 'shop,payments',
  clusterKinds: 'Namespace, apiextensions.k8s.io/CustomResourceDefinition',
});

const obj = (apiVersion: string, kind: string, name: string, namespace?: string, body = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace && { namespace }) },
  ...body,
});

function check(objects: KubeObject[], p = policy) {
  return checkRenderedObjects(objects, {
    namespace: 'shop',
    policy: p,
    scopes: scopesFromRender(objects).known,
  });
}

describe('the policy of rendered objects', () => {
  it("resolves namespaces: the source's for a namespaced object without one, none for a cluster-scoped one", () => {
    const result = check([
      obj('v1', 'ConfigMap', 'a'),
      obj('v1', 'ConfigMap', 'b', 'payments'),
      obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'reader', 'shop'),
    ]);
    expect(result).toEqual({
      ok: true,
      objects: [
        obj('v1', 'ConfigMap', 'a', 'shop'),
        obj('v1', 'ConfigMap', 'b', 'payments'),
        obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'reader'),
      ],
    });
  });

  it('refuses an object in a namespace the repository may not use, naming it and the rule', () => {
    const result = check([
      obj('v1', 'ConfigMap', 'a'),
      obj('apps/v1', 'Deployment', 'web', 'other'),
      obj('v1', 'Secret', 'token', 'janus-system'),
      obj('v1', 'ConfigMap', 'x', 'kube-system'),
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.refusals.map((r) => [r.object, r.rule])).toEqual([
      ['apps/v1 Deployment other/web', 'namespace'],
      ['v1 Secret janus-system/token', 'namespace'],
      ['v1 ConfigMap kube-system/x', 'namespace'],
    ]);
    expect(result.refusals[0]?.message).toMatch(
      /^apps\/v1 Deployment other\/web: namespace other is not allowed for this repository \(allowed: shop, payments; set by --allowed-namespaces/,
    );
    expect(result.refusals[1]?.message).toMatch(/the controller's own namespace: no repository may use it/);
  });

  it('allows a cluster-scoped kind only when --allowed-cluster-kinds lists it; unset, RBAC decides', () => {
    const crd = obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com');
    const role = obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'admin-ish');
    expect(check([crd, role]).ok).toBe(true);
    const result = check([crd, role], listing);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.refusals).toEqual([
      {
        object: 'rbac.authorization.k8s.io/v1 ClusterRole admin-ish',
        rule: 'cluster-kind',
        message:
          'rbac.authorization.k8s.io/v1 ClusterRole admin-ish is cluster-scoped, and its kind is not allowed for this repository (allowed: Namespace, apiextensions.k8s.io/CustomResourceDefinition; set by --allowed-cluster-kinds or JANUS_ALLOWED_CLUSTER_KINDS)',
      },
    ]);
  });

  it('allows a Namespace only when the repository may use it', () => {
    expect(check([obj('v1', 'Namespace', 'payments')], listing).ok).toBe(true);
    const refused = check(
      [obj('v1', 'Namespace', 'janus-system'), obj('v1', 'Namespace', 'kube-public')],
      listing,
    );
    expect(refused.ok ? [] : refused.refusals.map((r) => r.object)).toEqual([
      'v1 Namespace janus-system',
      'v1 Namespace kube-public',
    ]);
  });

  it("takes a custom kind's scope from the render's own CustomResourceDefinition, and refuses a kind nobody serves", () => {
    const crd = obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'gadgets.example.com', undefined, {
      spec: { group: 'example.com', names: { kind: 'Gadget' }, scope: 'Cluster' },
    });
    const scopes = scopesFromRender([
      crd,
      obj('example.com/v1', 'Gadget', 'g'),
      obj('other.io/v1', 'Thing', 't'),
    ]);
    expect(scopes.known.get('example.com/Gadget')).toBe('Cluster');
    expect(scopes.unknown).toEqual([{ key: 'other.io/Thing', apiVersion: 'other.io/v1', kind: 'Thing' }]);
    const result = checkRenderedObjects([obj('other.io/v1', 'Thing', 't')], {
      namespace: 'shop',
      policy,
      scopes: new Map([['other.io/Thing', 'Unknown']]),
    });
    expect(result.ok ? undefined : result.refusals[0]?.message).toBe(
      'other.io/v1 Thing shop/t: the cluster serves no Thing in other.io/v1, and the render defines none',
    );
  });

  it(`lists at most ${MAX_REFUSALS} refusals and counts the rest`, () => {
    const many = Array.from({ length: MAX_REFUSALS + 5 }, (_, i) => obj('v1', 'ConfigMap', `c${i}`, 'other'));
    const result = check(many);
    expect(result.ok ? undefined : [result.refusals.length, result.more]).toEqual([MAX_REFUSALS, 5]);
  });

  it('reads --allowed-cluster-kinds as Kind or group/Kind, and refuses anything else naming the flag', () => {
    expect(listing.clusterKinds).toEqual(['/Namespace', 'apiextensions.k8s.io/CustomResourceDefinition']);
    expect(() => repositoryPolicy({ defaultNamespace: 'shop', clusterKinds: 'namespaces' })).toThrow(
      PolicyError,
    );
    expect(() => repositoryPolicy({ defaultNamespace: 'shop', clusterKinds: '*' })).toThrow(
      /--allowed-cluster-kinds \(JANUS_ALLOWED_CLUSTER_KINDS\): "\*" is not a kind/,
    );
    expect(repositoryPolicy({ defaultNamespace: 'shop', clusterKinds: ' , ' }).clusterKinds).toBeUndefined();
  });
});
