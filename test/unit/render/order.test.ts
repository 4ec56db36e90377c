import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { applyOrder, hookPlace } from '../../../src/render/order.ts';

const object = (kind: string, name: string, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(annotations && { annotations }) },
});
const ids = (list: KubeObject[]) => list.map((o) => `${o.kind}/${o.metadata.name}`);
const hook = (kind: string, name: string, hooks: string, weight?: string) =>
  object(kind, name, {
    'helm.sh/hook': hooks,
    ...(weight !== undefined && { 'helm.sh/hook-weight': weight }),
  });

describe('apply order', () => {
  it("puts Namespaces, then CRDs, then Helm's install order by kind; unknown kinds last by name; the render's order among equals", () => {
    const rendered = [
      object('Widget', 'w'),
      object('Deployment', 'd1'),
      object('Service', 's'),
      object('CustomResourceDefinition', 'crd'),
      object('Anvil', 'a'),
      object('PriorityClass', 'p'),
      object('Deployment', 'd0'),
      object('ConfigMap', 'c'),
      object('Namespace', 'ns'),
      object('ServiceAccount', 'sa'),
      object('ValidatingWebhookConfiguration', 'v'),
    ];
    expect(ids(applyOrder(rendered))).toEqual([
      'Namespace/ns',
      'CustomResourceDefinition/crd',
      'PriorityClass/p',
      'ServiceAccount/sa',
      'ConfigMap/c',
      'Service/s',
      'Deployment/d1',
      'Deployment/d0',
      'ValidatingWebhookConfiguration/v',
      'Anvil/a',
      'Widget/w',
    ]);
  });

  it('leaves Helm hooks out with Ignore', () => {
    const rendered = [object('ConfigMap', 'c'), hook('Job', 'migrate', 'pre-install')];
    expect(ids(applyOrder(rendered, 'Ignore'))).toEqual(['ConfigMap/c']);
  });

  it('with Include, applies pre-install/pre-upgrade hooks first and post-install/post-upgrade hooks last, by weight; drops the others', () => {
    const rendered = [
      hook('Job', 'smoke', 'post-install,post-upgrade'),
      hook('Job', 'migrate', 'pre-upgrade', '5'),
      object('Deployment', 'web'),
      hook('ConfigMap', 'settings', 'pre-install', '-2'),
      hook('Pod', 'test', 'test'),
      hook('Job', 'backup', 'pre-delete'),
      hook('Job', 'undo', 'pre-rollback,post-rollback'),
      hook('Secret', 'early', 'pre-install', '5'),
      object('Namespace', 'ns'),
    ];
    expect(ids(applyOrder(rendered, 'Include'))).toEqual([
      'ConfigMap/settings',
      'Secret/early',
      'Job/migrate',
      'Namespace/ns',
      'Deployment/web',
      'Job/smoke',
    ]);
  });

  it('reads the hook annotation as Helm does: a list, a pre hook first', () => {
    expect(hookPlace(hook('Job', 'x', 'post-install, pre-install'))).toBe('pre');
    expect(hookPlace(hook('Job', 'x', 'post-upgrade'))).toBe('post');
    expect(hookPlace(hook('Job', 'x', 'test-success'))).toBe('dropped');
    expect(hookPlace(object('Job', 'x'))).toBeUndefined();
  });

  it('treats hook annotations as nothing special for Kustomize and plain sources', () => {
    expect(ids(applyOrder([hook('Job', 'x', 'test'), object('Namespace', 'ns')]))).toEqual([
      'Namespace/ns',
      'Job/x',
    ]);
  });
});
