import { describe, expect, it } from 'vitest';
import {
  cleanForRestore,
  contentFingerprint,
  deepEqual,
  patchIsUndone,
  reverseApply,
  reversePatch,
  sameContent,
} from '../../../src/changes/undo-rules.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const APPLIED_BY = 'tx.janus.io/applied-by';

/** A Deployment as the API server returns it before the transaction. */
function priorDeployment(): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      uid: '1b7d7a7e-0000-4000-8000-00000000d001',
      resourceVersion: '4812',
      generation: 7,
      creationTimestamp: '2026-02-01T09:00:00Z',
      labels: { app: 'web', tier: 'frontend' },
      annotations: { 'deployment.kubernetes.io/revision': '7' },
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1' }],
      ownerReferences: [
        { apiVersion: 'example.io/v1', kind: 'Shop', name: 'main', uid: 'u-shop', controller: true },
      ],
      finalizers: ['example.io/protect'],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'registry.example.com/web:1.4.2',
              ports: [{ containerPort: 8080, protocol: 'TCP' }],
              imagePullPolicy: 'IfNotPresent',
            },
            { name: 'log-shipper', image: 'registry.example.com/shipper:0.9' },
          ],
        },
      },
    },
    status: { replicas: 3, readyReplicas: 3, observedGeneration: 7 },
  };
}

/** The transaction's Patch: more replicas, a new image, a new label, a new annotation, a new field. */
function forwardPatch(): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      labels: { tier: 'edge', release: 'v2' },
      annotations: { [APPLIED_BY]: 'shop/deploy-v2@uid#0' },
    },
    spec: {
      replicas: 5,
      minReadySeconds: 10,
      template: {
        spec: {
          containers: [{ name: 'web', image: 'registry.example.com/web:2.0.0' }],
        },
      },
    },
  };
}

describe('cleanForRestore', () => {
  it('removes server-set metadata and status', () => {
    const prior = priorDeployment();
    prior.metadata.deletionTimestamp = '2026-03-01T00:00:00Z';
    prior.metadata.deletionGracePeriodSeconds = 30;
    prior.metadata.selfLink = '/apis/apps/v1/namespaces/shop/deployments/web';
    const clean = cleanForRestore(prior);
    for (const key of [
      'resourceVersion',
      'uid',
      'creationTimestamp',
      'generation',
      'managedFields',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'selfLink',
    ]) {
      expect(clean.metadata, key).not.toHaveProperty(key);
    }
    expect(clean).not.toHaveProperty('status');
  });

  it('keeps identity, ownerReferences, finalizers, labels, annotations and the content', () => {
    const prior = priorDeployment();
    const clean = cleanForRestore(prior);
    expect(clean.metadata).toEqual({
      name: 'web',
      namespace: 'shop',
      labels: prior.metadata.labels,
      annotations: prior.metadata.annotations,
      ownerReferences: prior.metadata.ownerReferences,
      finalizers: ['example.io/protect'],
    });
    expect(clean.apiVersion).toBe('apps/v1');
    expect(clean.kind).toBe('Deployment');
    expect(clean.spec).toEqual(prior.spec);
  });

  it('keeps the data of a ConfigMap and does not modify its input', () => {
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: 'shop', resourceVersion: '99', uid: 'u1' },
      data: { 'app.properties': 'mode=blue\n' },
      binaryData: { logo: 'iVBORw0KGgo=' },
    };
    const before = structuredClone(cm);
    const clean = cleanForRestore(cm);
    expect(clean).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: 'shop' },
      data: { 'app.properties': 'mode=blue\n' },
      binaryData: { logo: 'iVBORw0KGgo=' },
    });
    expect(cm).toEqual(before);
  });
});

describe('reverseApply: undoing a Deployment patch', () => {
  const reverse = reverseApply(forwardPatch(), priorDeployment());

  it('restores the prior replica count', () => {
    expect((reverse.spec as { replicas: number }).replicas).toBe(3);
  });

  it('restores the prior containers list whole: lists are atomic', () => {
    const containers = (reverse.spec as { template: { spec: { containers: unknown } } }).template.spec
      .containers;
    expect(containers).toEqual(
      (priorDeployment().spec as { template: { spec: { containers: unknown } } }).template.spec.containers,
    );
  });

  it('omits fields the patch added, so the server removes them', () => {
    expect(reverse.spec).not.toHaveProperty('minReadySeconds');
    expect(reverse.metadata.labels).not.toHaveProperty('release');
    expect(reverse.metadata).not.toHaveProperty('annotations');
  });

  it('restores prior label values and leaves untouched labels out', () => {
    expect(reverse.metadata.labels).toEqual({ tier: 'frontend' });
  });

  it('sends only what the patch touched, nothing else of the prior object', () => {
    expect(reverse).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { tier: 'frontend' } },
      spec: {
        replicas: 3,
        template: {
          spec: {
            containers: (priorDeployment().spec as { template: { spec: { containers: unknown } } }).template
              .spec.containers,
          },
        },
      },
    });
  });

  it('names the prior object even when the patch body names none', () => {
    const forward = forwardPatch();
    forward.metadata = { name: '' };
    const r = reverseApply(forward, priorDeployment());
    expect(r.metadata).toMatchObject({ name: 'web', namespace: 'shop' });
  });

  it('sets no namespace for a cluster-scoped target', () => {
    const prior: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'reader', labels: { team: 'a' }, resourceVersion: '5' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    };
    const forward: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'reader', labels: { team: 'b' } },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    };
    expect(reverseApply(forward, prior)).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'reader', labels: { team: 'a' } },
      rules: prior.rules,
    });
  });

  it('ignores metadata the patch set other than labels and annotations', () => {
    const forward = forwardPatch();
    forward.metadata.finalizers = ['other.io/x'];
    forward.metadata.ownerReferences = [];
    const r = reverseApply(forward, priorDeployment());
    expect(Object.keys(r.metadata).sort()).toEqual(['labels', 'name', 'namespace']);
  });
});

describe('reverseApply: undoing a ConfigMap patch', () => {
  const prior: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app-config',
      namespace: 'shop',
      resourceVersion: '100',
      annotations: { owner: 'team-a', [APPLIED_BY]: 'shop/deploy-v1@old#2' },
    },
    data: { mode: 'blue', timeout: '30s', region: 'eu' },
  };
  const forward: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app-config',
      namespace: 'shop',
      annotations: { [APPLIED_BY]: 'shop/deploy-v2@new#0' },
    },
    data: { mode: 'green', feature: 'on' },
  };

  it('restores changed keys, drops added keys, and restores the previous applied-by annotation', () => {
    expect(reverseApply(forward, prior)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'app-config',
        namespace: 'shop',
        annotations: { [APPLIED_BY]: 'shop/deploy-v1@old#2' },
      },
      data: { mode: 'blue' },
    });
  });

  it('leaves out a map the patch created entirely', () => {
    const noData: KubeObject = { ...prior, data: undefined };
    delete noData.data;
    const r = reverseApply(forward, noData);
    expect(r).not.toHaveProperty('data');
  });
});

describe('reversePatch', () => {
  it('recurses into nested maps and keeps only touched keys that existed', () => {
    const forward = { a: { b: { c: 2, added: true }, d: 'new' }, e: 1 };
    const prior = { a: { b: { c: 1, other: 'x' }, d: 'old', keep: 0 }, z: 9 };
    expect(reversePatch(forward, prior)).toEqual({ a: { b: { c: 1 }, d: 'old' } });
  });

  it('restores a whole prior value when the patch replaced a scalar with a map, or a map with a scalar', () => {
    expect(reversePatch({ x: { y: 1 } }, { x: 'scalar' })).toEqual({ x: 'scalar' });
    expect(reversePatch({ x: 'scalar' }, { x: { y: 1 } })).toEqual({ x: { y: 1 } });
  });

  it('restores a prior list whole, even when the patch changed one element', () => {
    expect(reversePatch({ args: ['--v=2'] }, { args: ['--v=1', '--port=80'] })).toEqual({
      args: ['--v=1', '--port=80'],
    });
  });

  it('restores a prior null and false', () => {
    expect(reversePatch({ a: 1, b: true }, { a: null, b: false })).toEqual({ a: null, b: false });
  });

  it('is empty when the patch only added fields', () => {
    expect(reversePatch({ spec: { paused: true } }, { spec: { replicas: 1 } })).toEqual({});
  });
});

describe('patchIsUndone', () => {
  /** The Deployment after the reverse apply: prior values back, added fields gone, server state new. */
  function afterRollback(): KubeObject {
    const d = priorDeployment();
    d.metadata.resourceVersion = '5120';
    d.metadata.generation = 9;
    d.status = { replicas: 3, readyReplicas: 2 };
    return d;
  }

  function afterCommit(): KubeObject {
    const d = afterRollback();
    const spec = d.spec as Record<string, unknown> & {
      template: { spec: { containers: { image: string }[] } };
    };
    spec.replicas = 5;
    spec.minReadySeconds = 10;
    (spec.template.spec.containers[0] as { image: string }).image = 'registry.example.com/web:2.0.0';
    d.metadata.labels = { app: 'web', tier: 'edge', release: 'v2' };
    d.metadata.annotations = { ...d.metadata.annotations, [APPLIED_BY]: 'shop/deploy-v2@uid#0' };
    return d;
  }

  it('is true once every touched field holds its prior value and added fields are gone', () => {
    expect(patchIsUndone(forwardPatch(), priorDeployment(), afterRollback())).toBe(true);
  });

  it('is false right after the commit', () => {
    expect(patchIsUndone(forwardPatch(), priorDeployment(), afterCommit())).toBe(false);
  });

  it.each<[string, (d: KubeObject) => void]>([
    ['replicas still differ', (d) => ((d.spec as { replicas: number }).replicas = 5)],
    ['an added field is still there', (d) => ((d.spec as { minReadySeconds?: number }).minReadySeconds = 10)],
    ['an added label is still there', (d) => (d.metadata.labels = { ...d.metadata.labels, release: 'v2' })],
    ['a changed label is not restored', (d) => (d.metadata.labels = { app: 'web', tier: 'edge' })],
    [
      'our applied-by annotation is still there',
      (d) => (d.metadata.annotations = { ...d.metadata.annotations, [APPLIED_BY]: 'shop/deploy-v2@uid#0' }),
    ],
    [
      'the containers list differs anywhere',
      (d) => {
        const spec = d.spec as { template: { spec: { containers: { image: string }[] } } };
        (spec.template.spec.containers[1] as { image: string }).image = 'registry.example.com/shipper:1.0';
      },
    ],
  ])('is false when %s', (_, mutate) => {
    const current = afterRollback();
    mutate(current);
    expect(patchIsUndone(forwardPatch(), priorDeployment(), current)).toBe(false);
  });

  it('ignores fields the patch never touched', () => {
    const current = afterRollback();
    current.metadata.labels = { ...current.metadata.labels, app: 'web-renamed', extra: 'x' };
    current.metadata.annotations = { 'deployment.kubernetes.io/revision': '9' };
    (current.spec as { strategy: unknown }).strategy = { type: 'Recreate' };
    expect(patchIsUndone(forwardPatch(), priorDeployment(), current)).toBe(true);
  });
});

describe('sameContent', () => {
  const prior: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app-config',
      namespace: 'shop',
      uid: 'old-uid',
      resourceVersion: '100',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { app: 'web' },
      annotations: { owner: 'team-a' },
    },
    data: { mode: 'blue' },
  };

  it('recognises a re-created object despite new uid, resourceVersion, timestamps and managedFields', () => {
    const recreated: KubeObject = {
      ...prior,
      metadata: {
        ...prior.metadata,
        uid: 'new-uid',
        resourceVersion: '250',
        creationTimestamp: '2026-03-01T00:00:00Z',
        managedFields: [{ manager: 'janus-deploy-v2' }],
      },
    };
    expect(sameContent(prior, recreated)).toBe(true);
  });

  it.each<[string, (o: KubeObject) => void]>([
    ['data', (o) => (o.data = { mode: 'green' })],
    ['an added data key', (o) => (o.data = { mode: 'blue', extra: '1' })],
    ['labels', (o) => (o.metadata.labels = { app: 'api' })],
    ['annotations', (o) => (o.metadata.annotations = {})],
    ['name', (o) => (o.metadata.name = 'other')],
  ])('tells objects apart that differ in %s', (_, mutate) => {
    const current = structuredClone(prior);
    mutate(current);
    expect(sameContent(prior, current)).toBe(false);
  });
});

describe('contentFingerprint: a controller’s write is not someone else’s change', () => {
  const committed = (): KubeObject => {
    const d = priorDeployment();
    d.metadata.resourceVersion = '300';
    d.metadata.generation = 2;
    d.metadata.annotations = { ...d.metadata.annotations, [APPLIED_BY]: 'shop/deploy-v2/1' };
    return d;
  };

  it('ignores what the Deployment controller writes after our commit: status, revision, resourceVersion', () => {
    const later = committed();
    later.metadata.resourceVersion = '311';
    later.metadata.annotations = { ...later.metadata.annotations, 'deployment.kubernetes.io/revision': '4' };
    later.metadata.managedFields = [{ manager: 'kube-controller-manager', subresource: 'status' }];
    (later as { status?: unknown }).status = { observedGeneration: 2, replicas: 3, updatedReplicas: 1 };
    expect(contentFingerprint(later)).toBe(contentFingerprint(committed()));
  });

  it('does not depend on key order', () => {
    const reordered = committed();
    reordered.metadata = Object.fromEntries(
      Object.entries(reordered.metadata).reverse(),
    ) as KubeObject['metadata'];
    expect(contentFingerprint(reordered)).toBe(contentFingerprint(committed()));
  });

  it.each<[string, (o: KubeObject) => void]>([
    ['a scaled spec (someone else, or an HPA)', (o) => ((o.spec as { replicas: number }).replicas = 7)],
    ['a label', (o) => (o.metadata.labels = { ...o.metadata.labels, team: 'b' })],
    ['a user annotation', (o) => (o.metadata.annotations = { ...o.metadata.annotations, note: 'hotfix' })],
  ])('changes with %s', (_, mutate) => {
    const changed = committed();
    mutate(changed);
    expect(contentFingerprint(changed)).not.toBe(contentFingerprint(committed()));
  });

  it('lets sameContent recognise a restored Deployment whose controller has since bumped its revision', () => {
    const prior = priorDeployment();
    const restored = structuredClone(prior);
    restored.metadata.annotations = {
      ...restored.metadata.annotations,
      'deployment.kubernetes.io/revision': '9',
    };
    expect(sameContent(prior, restored)).toBe(true);
  });
});

describe('deepEqual', () => {
  it('compares JSON values structurally, ignoring key order', () => {
    expect(deepEqual({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] })).toBe(true);
  });

  it.each<[unknown, unknown]>([
    [{ a: 1 }, { a: 1, b: 2 }],
    [{ a: 1, b: 2 }, { a: 1 }],
    [
      [1, 2],
      [2, 1],
    ],
    [[1], [1, 1]],
    [{ a: [] }, { a: {} }],
    [null, {}],
    [undefined, null],
    ['1', 1],
    [{ a: undefined }, { b: undefined }],
  ])('tells %j and %j apart', (a, b) => {
    expect(deepEqual(a, b)).toBe(false);
  });
});
