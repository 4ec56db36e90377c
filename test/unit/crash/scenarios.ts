/**
 * The sagas of the real crash tests (test/crash/), over the in-memory API and the simulated
 * cluster: the same Transactions (test/support/crash/crash-scenarios.ts), the same targets before,
 * the same comparison of what they hold after.
 */
import { parseAllowedAddresses } from '../../../src/analysis/index.ts';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { KubeRequest } from '../../../src/kube/client.ts';
import { KubeApiError } from '../../../src/kube/errors.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { sourceFieldManager } from '../../../src/saga/targets.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { configMap, fourTargetObjects, transaction } from '../../support/cluster/saga.ts';
import {
  deployment,
  deploymentStateOf,
  statefulSet,
  statefulSetPodOf,
} from '../../support/cluster/workloads.ts';
import {
  appliedBy,
  CONFIGMAP_TARGETS,
  configMapChanges,
  configMapState,
  REFUSED_OBJECT,
  rolloutChanges,
  SOURCE,
  SOURCE_TARGETS,
  sourceAppliedBefore,
  sourceTargetState,
  sourceTransaction,
  statefulSetChanges,
} from '../../support/crash/crash-scenarios.ts';
import type { FakeApi } from '../../support/fake-api.ts';
import type { InMemoryScenario } from './crash-matrix.ts';
import { NAMESPACE } from './crash-matrix.ts';
import { AGE_IDENTITY, ENCRYPTED_CREDS } from './sops-fixture.ts';

const deployer = (api: FakeApi) =>
  api.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer', namespace: NAMESPACE } });

const find = <T extends KubeObject>(api: FakeApi, apiVersion: string, kind: string, name: string) =>
  api.get<T>({ apiVersion, kind, name, namespace: NAMESPACE });

/** commit.test.ts and rollback.test.ts: four changes, and a fifth an admission policy refuses. */
export function configMapSaga(withRefused: boolean): InMemoryScenario {
  return {
    setup(api) {
      deployer(api);
      for (const cm of fourTargetObjects(NAMESPACE)) api.put(cm);
    },
    transaction: () => transaction(NAMESPACE, 'crashy', configMapChanges(withRefused)),
    observe: (api) =>
      Object.fromEntries(
        CONFIGMAP_TARGETS.map((name) => [name, configMapState(find(api, 'v1', 'ConfigMap', name))]),
      ),
    ...(withRefused && { admit: refuseAtCommit }),
  };
}

/** As test/support/cluster/admission.ts's policy: real writes of the object refused, dry runs not. */
function refuseAtCommit(req: KubeRequest): void {
  const body = req.body as KubeObject | undefined;
  const write = req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH';
  if (!write || req.query?.dryRun || !req.path.includes('/configmaps')) return;
  if (body?.metadata?.name !== REFUSED_OBJECT) return;
  throw new KubeApiError(req.method, req.path, 422, {
    reason: 'Invalid',
    message: `${REFUSED_OBJECT} may not be written (test policy)`,
  });
}

/**
 * source-transaction.test.ts: a source's commit (an Apply create, an Apply update dropping a
 * field, a prune) over what the source applied before; with `withRefused`, a fourth change
 * refused at commit, which rolls the three back.
 */
export function sourceSaga(withRefused: boolean): InMemoryScenario {
  return {
    setup(api) {
      deployer(api);
      for (const object of sourceAppliedBefore(NAMESPACE))
        api.apply(object, sourceFieldManager(NAMESPACE, SOURCE));
    },
    transaction: () => sourceTransaction(NAMESPACE, withRefused),
    observe: (api) =>
      Object.fromEntries(
        SOURCE_TARGETS.map((name) => [name, sourceTargetState(find(api, 'v1', 'ConfigMap', name))]),
      ),
    ...(withRefused && { admit: refuseAtCommit }),
  };
}

/** sops-commit.test.ts: a Secret updated from a SOPS-encrypted manifest, the key in the namespace. */
export function sopsSaga(): InMemoryScenario {
  const secret = (name: string, stringData: Record<string, string>) =>
    ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NAMESPACE },
      type: 'Opaque',
      stringData,
    }) as KubeObject;
  return {
    setup(api) {
      deployer(api);
      api.put(secret('creds', { password: 'before' }));
      api.put(secret('janus-sops-age', { 'team.agekey': AGE_IDENTITY }));
    },
    transaction: () =>
      transaction(NAMESPACE, 'crashy', [
        {
          target: { apiVersion: 'v1', kind: 'Secret', name: 'creds' },
          type: 'Update',
          sopsContent: ENCRYPTED_CREDS,
        },
      ]),
    observe(api) {
      const creds = find<KubeObject & { data?: Record<string, string> }>(api, 'v1', 'Secret', 'creds');
      return {
        password: Buffer.from(creds?.data?.password ?? '', 'base64').toString('utf8'),
        appliedBy: creds && appliedBy(creds),
      };
    },
  };
}

/**
 * health-gate.test.ts, bake-window.test.ts, analysis-window.test.ts: the ConfigMap app-config and
 * the Deployment web (2 replicas of POD_IMAGES.ready) rolled out to `image` through the gate.
 */
export function rolloutSaga(
  image: string,
  health: Transaction['spec']['health'] = { timeout: '2m' },
): InMemoryScenario {
  return {
    setup(api) {
      deployer(api);
      api.put(configMap(NAMESPACE, 'app-config', { release: 'v1' }));
      api.put(deployment(NAMESPACE, 'web', POD_IMAGES.ready));
    },
    transaction: () => transaction(NAMESPACE, 'gated', rolloutChanges(image), { health }),
    observe: (api) => ({
      deployment: deploymentStateOf(find(api, 'apps/v1', 'Deployment', 'web') as KubeObject),
      config: find<KubeObject & { data?: unknown }>(api, 'v1', 'ConfigMap', 'app-config')?.data,
    }),
  };
}

/** Where the analysis checks look: a smoke test and a Prometheus, both allowed by the platform team. */
const SMOKE = 'http://smoke.shop.svc';
const PROMETHEUS = 'http://prometheus.monitoring.svc:9090';

/**
 * analysis-window.test.ts: the rollout with metric analysis in its bake window, an HTTP check of
 * `path` (/ok answers 200, anything else 503) and a Prometheus query answering `errorRate`,
 * failing above 0.05.
 */
export function analysedRollout(path: string, errorRate: number, stableFor: string): InMemoryScenario {
  return {
    ...rolloutSaga(POD_IMAGES.readyAlternative, {
      timeout: '2m',
      stableFor,
      analysis: [
        { check: { name: 'smoke', interval: '2s', http: { url: `${SMOKE}${path}` } } },
        {
          check: {
            name: 'errors',
            interval: '3s',
            prometheus: { address: PROMETHEUS, query: 'sum(rate(errors[1m]))', failWhen: 'result > 0.05' },
          },
        },
      ],
    }),
    analysis: {
      allowedAddresses: parseAllowedAddresses(`${SMOKE},${PROMETHEUS}`),
      templateNamespaces: ['janus-system'],
    },
    answer(url) {
      if (url.startsWith(SMOKE)) return { status: url.startsWith(`${SMOKE}/ok`) ? 200 : 503 };
      const data = { resultType: 'vector', result: [{ metric: {}, value: [0, String(errorRate)] }] };
      return { status: 200, body: JSON.stringify({ status: 'success', data }) };
    },
  };
}

/** forced-rollback.test.ts: the StatefulSet db (3 pods) released to a crash-looping image. */
export function forcedRollbackSaga(): InMemoryScenario {
  return {
    setup(api) {
      deployer(api);
      api.put(statefulSet(NAMESPACE, 'db', POD_IMAGES.ready));
    },
    transaction: () =>
      transaction(NAMESPACE, 'release', statefulSetChanges(POD_IMAGES.crashLoop), {
        health: { timeout: '60s' },
      }),
    observe: (api) =>
      api
        .list('Pod', NAMESPACE)
        .map(statefulSetPodOf)
        .map(({ name, image, ready }) => ({ name, image, ready }))
        .sort((a, b) => a.name.localeCompare(b.name)),
  };
}
