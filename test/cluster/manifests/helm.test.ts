/**
 * The Helm chart, manifests/helm/janus, with the real `helm` (built from its Go module by
 * test/kube-testenv/build-render-tools.sh): it lints; with default values it renders what
 * `kubectl kustomize manifests/` does (a drift guard: a change to manifests/ fails here until the
 * chart follows); the API server accepts what it renders; and a real `helm install` runs, as
 * install.test.ts does for the kustomize install, a controller that takes a sample Transaction to
 * Committed, before `helm uninstall` removes it all.
 *
 * A third release of the same instance, in another namespace, is refused by the chart itself
 * (its InstanceClaim check), naming the installation that serves the instance.
 *
 * This file shares its cluster with the others, install.test.ts included, possibly at the same
 * time. So the release is named janus-helm, not janus: every name in the chart derives from the
 * release's full name (janus-helm-controller, janus-helm-tenant, …), none collides with the
 * cluster-scoped objects of manifests/ (janus-controller, janus-tenant, …) that the global setup
 * and install.test.ts apply, and uninstalling it removes none of theirs. It lives in a namespace
 * of its own and reconciles a sample namespace of its own. The CRD is shared: the chart keeps it
 * in crds/, which helm installs when missing, skips when present, and never deletes.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { loadKubeConfig } from '../../../src/kube/connection.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { execForm, parseDockerfile } from '../../support/dockerfile.ts';
import { eventually } from '../../support/eventually.ts';
import { localRepository } from '../../support/git/git-server.ts';
import { renderTools } from '../../support/servers/render-tools.ts';
import { type Container, type PodProcess, runContainer } from './pod.ts';

const clients = useClients();
const kube = inject('kube');
const tool = (name: string) => (kube.binDir ? join(kube.binDir, name) : name);

const CHART = 'manifests/helm/janus';
/** Not "janus": see the top of this file. */
const RELEASE = 'janus-helm';
/** A second release beside it, in the same namespace, with an instance of its own. */
const SECOND_RELEASE = 'janus-helm-green';
const suffix = randomBytes(3).toString('hex');
/** The release's namespace, and the namespace its controller reconciles. */
const NAMESPACE = `janus-helm-${suffix}`;
const SAMPLE_NAMESPACE = `janus-helm-sample-${suffix}`;

/** helm's own folders (cache, configuration, repositories): private to this test. */
let helmHome = '';
let repo = '';
let pod: PodProcess | undefined;
/** Every pod process started, stopped after the tests whatever happens. */
const pods: PodProcess[] = [];

function check(result: SpawnSyncReturns<string>, what: string): string {
  if (result.status !== 0)
    throw new Error(`${what} exited ${result.status}:\n${result.stderr}${result.stdout}`);
  return result.stdout;
}

function helm(args: string[], input?: string): SpawnSyncReturns<string> {
  return spawnSync(renderTools().helm, args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    input,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: helmHome,
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_DATA_HOME: join(helmHome, 'data'),
    },
  });
}

/** helm against the test cluster, as its admin. */
const helmOnCluster = (...args: string[]) => helm([...args, '--kubeconfig', kube.kubeconfigs.admin]);

function kubectl(args: string[], input?: string): SpawnSyncReturns<string> {
  return spawnSync(tool('kubectl'), ['--kubeconfig', kube.kubeconfigs.admin, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    input,
  });
}

const objectsOf = (yaml: string): KubeObject[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);

/** `helm template` of the chart, CRDs included. */
function template(release: string, namespace: string, ...args: string[]): KubeObject[] {
  return objectsOf(
    check(
      helm(['template', release, CHART, '--namespace', namespace, '--include-crds', ...args]),
      'helm template',
    ),
  );
}

const id = (o: KubeObject) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byId = (objects: KubeObject[]) => new Map(objects.map((o) => [id(o), o]));

type PodTemplate = { metadata: { annotations?: Record<string, string> }; spec: { containers: Container[] } };
function podTemplate(deployment: KubeObject | undefined): PodTemplate {
  if (!deployment) throw new Error('no Deployment');
  return (deployment.spec as { template: PodTemplate }).template;
}

/**
 * What the chart may add to the objects of manifests/ and still render "the same": Helm's labels
 * (chart, version, managed-by, instance), also in the selectors (app.kubernetes.io/instance keeps
 * two releases in one namespace from selecting each other's pods), the pod template's checksum
 * annotations (a settings change restarts the pods) and the container image, checked on its own.
 */
function comparable(obj: KubeObject): unknown {
  const copy = structuredClone(obj) as KubeObject;
  delete copy.metadata.labels;
  if (obj.kind === 'Deployment') {
    const pod = podTemplate(copy);
    delete (pod.metadata as { labels?: unknown }).labels;
    for (const key of Object.keys(pod.metadata.annotations ?? {}))
      if (key.startsWith('checksum/')) delete pod.metadata.annotations?.[key];
    for (const container of pod.spec.containers) delete (container as { image?: string }).image;
  }
  const withoutInstance = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(withoutInstance);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== 'app.kubernetes.io/instance')
        .map(([key, v]) => [key, withoutInstance(v)]),
    );
  };
  return withoutInstance(copy);
}

/** Values that run a release on the sample namespace, from a local repository. */
function sampleValues(repository: string): Record<string, unknown> {
  return {
    // The chart creates the Secret; the token is not needed for a local repository.
    git: { repository, token: 'not-needed-for-a-local-repository', pollInterval: '2s' },
    policy: { allowedNamespaces: [SAMPLE_NAMESPACE], allowedServiceAccounts: ['sample-deployer'] },
    // Other tests share this cluster: reconcile the sample's namespace only.
    watchNamespace: SAMPLE_NAMESPACE,
  };
}

/** helm install into NAMESPACE; --wait: kwok marks the pods Ready (no process runs in them; see runReleasePod). */
async function install(release: string, values: Record<string, unknown>): Promise<SpawnSyncReturns<string>> {
  const file = join(helmHome, `${release}.values.yaml`);
  await writeFile(file, stringify(values));
  return helmOnCluster(
    'install',
    release,
    CHART,
    '--namespace',
    NAMESPACE,
    '--values',
    file,
    '--wait',
    '--timeout',
    '2m',
  );
}

/** Runs the container of a release's Deployment as a process, as test/cluster/manifests/pod.ts does. */
async function runReleasePod(release: string): Promise<PodProcess> {
  const deployment = await clients.admin.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: release,
    namespace: NAMESPACE,
  });
  const dockerfile = parseDockerfile(await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  const entrypoint = execForm(
    dockerfile.stages.at(-1) ?? { base: '', name: undefined, instructions: [] },
    'ENTRYPOINT',
  );
  if (!entrypoint) throw new Error('the Dockerfile has no ENTRYPOINT');
  const started = await runContainer({
    objects: clients.admin,
    deployment,
    entrypoint,
    cwd: REPO_ROOT,
    caData: loadKubeConfig({ kubeconfig: kube.kubeconfigs.admin }).cluster?.caData ?? '',
    // The only difference from the Pod: several processes share this host, any free port instead of :8080.
    overrides: { JANUS_METRICS_BIND_ADDRESS: '127.0.0.1:0' },
  });
  pods.push(started);
  return started;
}

beforeAll(async () => {
  helmHome = await mkdtemp(join(tmpdir(), 'janus-helm-home-'));
  repo = await localRepository('janus-helm-repo-', 'Transactions for the Helm install test.\n');
  // As a cluster administrator would prepare it: Pod Security "restricted", like janus-system.
  await clients.admin.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NAMESPACE, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
  });
});

afterAll(async () => {
  for (const running of pods) {
    if (running.child.exitCode !== null) continue;
    running.child.kill('SIGKILL');
    await running.exited;
  }
  // Normally done by the tests already; this is for a run that stopped before.
  for (const release of [RELEASE, SECOND_RELEASE])
    helmOnCluster('uninstall', release, '--namespace', NAMESPACE, '--ignore-not-found');
  for (const name of [NAMESPACE, SAMPLE_NAMESPACE])
    await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => {});
  await rm(helmHome, { recursive: true, force: true });
  await rm(repo, { recursive: true, force: true });
});

describe('the Helm chart manifests/helm/janus', () => {
  it('passes helm lint --strict, with default values and with every optional object on', () => {
    check(helm(['lint', '--strict', CHART]), 'helm lint');
    check(
      helm([
        'lint',
        '--strict',
        CHART,
        '--set',
        'serviceMonitor.enabled=true,webhook.enabled=true,git.repository=https://git.example/changes',
        '--set',
        `git.token=t,git.webhookSecret=w,image.digest=sha256:${'a'.repeat(64)}`,
        '--set',
        'signatures.enabled=true,signatures.allowedSigners=a@example.com ssh-ed25519 AAAA',
        '--set',
        'commitStatus.enabled=true,commitStatus.provider=gitlab,commitStatus.apiUrl=https://git.example/api/v4',
        '--set',
        'resultsSigning.enabled=true',
        '--set',
        'notifications.enabled=true,notifications.config=routes: [],notifications.existingSecret=janus-notifications',
      ]),
      'helm lint with options',
    );
  });

  it('with default values, as release janus in janus-system, renders exactly what kubectl kustomize manifests/ does', async () => {
    const kustomized = objectsOf(check(kubectl(['kustomize', 'manifests/']), 'kubectl kustomize'));
    // Helm installs into the release's namespace (helm install --create-namespace), not one of its own.
    const expected = kustomized.filter((o) => o.kind !== 'Namespace');
    const chart = template('janus', 'janus-system');

    expect([...byId(chart).keys()].sort()).toEqual([...byId(expected).keys()].sort());
    const rendered = byId(chart);
    for (const want of expected) {
      // Rules, bindings, the admission policy, the settings, the pod spec, the CRD: all of it.
      expect(comparable(rendered.get(id(want)) as KubeObject), id(want)).toEqual(comparable(want));
    }

    // The image: the chart's appVersion, which is Janus' version.
    const chartYaml = parse(await readFile(join(REPO_ROOT, CHART, 'Chart.yaml'), 'utf8')) as {
      appVersion: string;
    };
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chartYaml.appVersion).toBe(pkg.version);
    const container = podTemplate(rendered.get('Deployment janus-system/janus')).spec.containers[0];
    expect((container as { image?: string }).image).toBe(`ghcr.io/janus-gitops/janus:${pkg.version}`);
    // crds/ is a copy of the generated CRD (npm run generate writes manifests/crd/ only).
    for (const crd of [
      'transactions.tx.janus.io.yaml',
      'analysistemplates.tx.janus.io.yaml',
      'sources.tx.janus.io.yaml',
      'instanceclaims.tx.janus.io.yaml',
    ]) {
      expect(await readFile(join(REPO_ROOT, CHART, 'crds', crd), 'utf8')).toBe(
        await readFile(join(REPO_ROOT, 'manifests/crd', crd), 'utf8'),
      );
    }
  });

  it('names every object after the release, so that a second release collides with nothing of manifests/', () => {
    const kustomized = objectsOf(check(kubectl(['kustomize', 'manifests/']), 'kubectl kustomize'));
    const chart = template(RELEASE, NAMESPACE).filter((o) => o.kind !== 'CustomResourceDefinition');
    for (const obj of chart) {
      expect(obj.metadata.name, id(obj)).toMatch(new RegExp(`^${RELEASE}(-|$)`));
      expect(obj.metadata.namespace ?? NAMESPACE, id(obj)).toBe(NAMESPACE);
    }
    const clusterScoped = new Set(kustomized.filter((o) => !o.metadata.namespace).map(id));
    expect(chart.map(id).filter((i) => clusterScoped.has(i))).toEqual([]);
  });

  it('renders the lock policy with the values of locks.*, or none with locks.enabled=false', () => {
    const hpa = 'system:serviceaccount:kube-system:horizontal-pod-autoscaler';
    const objects = byId(
      template(
        RELEASE,
        NAMESPACE,
        '--set',
        `locks.clusterScoped=Warn,locks.breakGlassGroup=oncall,locks.scalers[0]=${hpa}`,
        '--set-json',
        'locks.extraWriters={"system:kube-controller-manager":["*"]}',
      ),
    );
    type Policy = { spec: { variables: { name: string; expression: string }[] } };
    const policy = objects.get(`ValidatingAdmissionPolicy /${RELEASE}-locks`) as unknown as Policy;
    const variable = (name: string) => policy.spec.variables.find((v) => v.name === name)?.expression;
    expect(variable('breakGlassGroup')).toBe('"oncall"');
    expect(variable('scalers')).toBe(`["${hpa}"]`);
    expect(variable('controllers')).toMatch(/'jobs\.batch'\], "system:kube-controller-manager": \["\*"\] }$/);
    const cluster = objects.get(`ValidatingAdmissionPolicyBinding /${RELEASE}-locks-cluster`) as unknown as {
      spec: { validationActions: string[]; paramRef: { name: string; namespace: string } };
    };
    expect(cluster.spec.validationActions).toEqual(['Warn']);
    // The controller writes the table janus-locks whatever the release's name.
    expect(cluster.spec.paramRef).toMatchObject({ name: 'janus-locks', namespace: NAMESPACE });

    const disabled = template(RELEASE, NAMESPACE, '--set', 'locks.enabled=false').map(id);
    expect(disabled.filter((i) => i.includes('-locks'))).toEqual([]);
  });

  it('renders two releases side by side in one namespace with no object or Transactions in common', () => {
    const settingsOf = (objects: KubeObject[], release: string) =>
      byId(objects).get(`ConfigMap ${NAMESPACE}/${release}-settings`)?.data as Record<string, string>;
    const blue = template('janus-blue', NAMESPACE, '--set', 'instance=blue');
    const green = template('janus-green', NAMESPACE, '--set', 'instance=green');
    const shared = blue.map(id).filter((i) => byId(green).has(i));
    expect(shared).toEqual([
      'CustomResourceDefinition /analysistemplates.tx.janus.io',
      'CustomResourceDefinition /instanceclaims.tx.janus.io',
      'CustomResourceDefinition /locktables.tx.janus.io',
      'CustomResourceDefinition /sources.tx.janus.io',
      'CustomResourceDefinition /transactions.tx.janus.io',
    ]);
    // Each handles the Transactions of its instance (and leads under janus-controller-<instance>).
    expect(settingsOf(blue, 'janus-blue').JANUS_INSTANCE).toBe('blue');
    expect(settingsOf(green, 'janus-green').JANUS_INSTANCE).toBe('green');
    // Without the value: the default installation (Transactions without the label), as manifests/.
    expect(settingsOf(template(RELEASE, NAMESPACE), RELEASE)).not.toHaveProperty('JANUS_INSTANCE');
    // An instance that could not be a label value is refused before anything is installed.
    const refused = helm(['template', 'janus-red', CHART, '--set', 'instance=Red_1']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/instance/);
  });

  it('renders the webhook listener, a Secret from values, the ServiceMonitor and commit statuses when asked to', () => {
    const chart = byId(
      template(
        RELEASE,
        NAMESPACE,
        '--set',
        'webhook.enabled=true,serviceMonitor.enabled=true,git.repository=https://git.example/changes',
        '--set',
        'git.token=a-token,git.webhookSecret=a-secret,metrics.port=9090',
        '--set',
        'commitStatus.enabled=true,commitStatus.tokenKey=status-token,commitStatus.provider=gitea',
        '--set',
        'commitStatus.targetUrl=https://janus.example/{namespace}/{name}',
      ),
    );
    const secret = chart.get(`Secret ${NAMESPACE}/${RELEASE}-git`);
    expect(secret?.stringData).toEqual({
      repository: 'https://git.example/changes',
      token: 'a-token',
      'webhook-secret': 'a-secret',
    });
    const pod = podTemplate(chart.get(`Deployment ${NAMESPACE}/${RELEASE}`)).spec as {
      containers: Container[];
      volumes: { name: string; secret?: { secretName: string } }[];
    };
    const env = Object.fromEntries(
      (pod.containers[0]?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]),
    );
    expect(env).toMatchObject({
      JANUS_REPO: { secretKeyRef: { name: `${RELEASE}-git`, key: 'repository' } },
      JANUS_WEBHOOK_SECRET_FILE: '/var/run/secrets/janus/git/webhook-secret',
      JANUS_WEBHOOK_BIND_ADDRESS: ':8081',
      JANUS_METRICS_BIND_ADDRESS: ':9090',
      JANUS_COMMIT_STATUS_TOKEN_FILE: '/var/run/secrets/janus/git/status-token',
      JANUS_COMMIT_STATUS_PROVIDER: 'gitea',
      JANUS_COMMIT_STATUS_TARGET_URL: 'https://janus.example/{namespace}/{name}',
    });
    expect(env).not.toHaveProperty('JANUS_COMMIT_STATUS_API_URL');
    expect(pod.containers[0]?.ports).toEqual([
      { name: 'http', containerPort: 9090, protocol: 'TCP' },
      { name: 'webhook', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(pod.volumes.find((v) => v.name === 'git-credentials')?.secret?.secretName).toBe(`${RELEASE}-git`);
    const service = chart.get(`Service ${NAMESPACE}/${RELEASE}`) as KubeObject & {
      spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
    };
    expect(service.spec.ports.map((p) => [p.name, p.port, p.targetPort])).toEqual([['http', 9090, 'http']]);
    const webhookService = chart.get(`Service ${NAMESPACE}/${RELEASE}-webhook`) as typeof service;
    expect(webhookService.spec.ports.map((p) => [p.name, p.port, p.targetPort])).toEqual([
      ['webhook', 8081, 'webhook'],
    ]);
    expect(webhookService.spec.selector).toEqual(service.spec.selector);
    expect(service.metadata.annotations?.['prometheus.io/port']).toBe('9090');
    const monitor = chart.get(`ServiceMonitor ${NAMESPACE}/${RELEASE}`) as KubeObject & {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
    };
    expect(monitor.spec.endpoints).toEqual([{ port: 'http', path: '/metrics' }]);
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels))
      expect({ ...service.metadata.labels, ...service.spec.selector }[key], key).toBe(value);
  });

  it('renders signed commits when asked to: the settings, the allowed-signers ConfigMap and its folder mount', () => {
    const chart = byId(
      template(
        RELEASE,
        NAMESPACE,
        '--set',
        'signatures.enabled=true,signatures.allowedSigners=alice@example.com ssh-ed25519 AAAA',
        '--set-json',
        'signatures.signerNamespaces=["alice@example.com=shop","bob@example.com=shop"]',
      ),
    );
    expect(chart.get(`ConfigMap ${NAMESPACE}/${RELEASE}-allowed-signers`)?.data).toEqual({
      allowed_signers: 'alice@example.com ssh-ed25519 AAAA',
    });
    const pod = podTemplate(chart.get(`Deployment ${NAMESPACE}/${RELEASE}`)).spec as {
      containers: (Container & { volumeMounts: { name: string; mountPath: string; subPath?: string }[] })[];
      volumes: { name: string; configMap?: { name: string } }[];
    };
    const env = Object.fromEntries(
      (pod.containers[0]?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]),
    );
    expect(env).toMatchObject({
      JANUS_VERIFY_SIGNATURES: 'true',
      JANUS_ALLOWED_SIGNERS_FILE: '/etc/janus/signers/allowed_signers',
      JANUS_SIGNER_NAMESPACES: 'alice@example.com=shop,bob@example.com=shop',
    });
    // A folder, not a subPath: the kubelet updates it when the ConfigMap changes.
    expect(pod.containers[0]?.volumeMounts.find((m) => m.name === 'allowed-signers')).toEqual({
      name: 'allowed-signers',
      mountPath: '/etc/janus/signers',
      readOnly: true,
    });
    expect(pod.volumes.find((v) => v.name === 'allowed-signers')?.configMap?.name).toBe(
      `${RELEASE}-allowed-signers`,
    );
    // Off by default: nothing of it is rendered.
    const plain = JSON.stringify(template(RELEASE, NAMESPACE));
    expect(plain).not.toContain('JANUS_VERIFY_SIGNATURES');
    expect(plain).not.toContain('allowed-signers');
  });

  it('renders signed results when asked to: the key file setting and the Secret mounted as a folder', () => {
    const chart = byId(template(RELEASE, NAMESPACE, '--set', 'resultsSigning.enabled=true'));
    const pod = podTemplate(chart.get(`Deployment ${NAMESPACE}/${RELEASE}`)).spec as {
      containers: (Container & { volumeMounts: { name: string; mountPath: string; subPath?: string }[] })[];
      volumes: { name: string; secret?: { secretName: string; defaultMode: number } }[];
    };
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env.JANUS_RESULTS_SIGNING_KEY_FILE).toBe('/var/run/secrets/janus/results-signing/ssh-privatekey');
    expect(pod.containers[0]?.volumeMounts.find((m) => m.name === 'results-signing-key')).toEqual({
      name: 'results-signing-key',
      mountPath: '/var/run/secrets/janus/results-signing',
      readOnly: true,
    });
    expect(pod.volumes.find((v) => v.name === 'results-signing-key')?.secret).toEqual({
      secretName: 'janus-results-signing-key',
      defaultMode: 288,
    });
    // Off by default: nothing of it is rendered.
    const plain = JSON.stringify(template(RELEASE, NAMESPACE));
    expect(plain).not.toContain('JANUS_RESULTS_SIGNING_KEY_FILE');
    expect(plain).not.toContain('results-signing');
  });

  it('renders notifications when asked to: the settings file, its ConfigMap and the Secret, each mounted as a folder', () => {
    const config = 'providers: []\nroutes: []\n';
    const chart = byId(
      template(
        RELEASE,
        NAMESPACE,
        '--set',
        'notifications.enabled=true,notifications.existingSecret=janus-notifications',
        '--set-string',
        `notifications.config=${config}`,
      ),
    );
    expect(chart.get(`ConfigMap ${NAMESPACE}/${RELEASE}-notifications`)?.data).toEqual({
      'notifications.yaml': config,
    });
    const pod = podTemplate(chart.get(`Deployment ${NAMESPACE}/${RELEASE}`)).spec as {
      containers: (Container & { volumeMounts: { name: string; mountPath: string; subPath?: string }[] })[];
      volumes: {
        name: string;
        configMap?: { name: string };
        secret?: { secretName: string; defaultMode: number };
      }[];
    };
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env.JANUS_NOTIFICATIONS_CONFIG).toBe('/etc/janus/notifications/config/notifications.yaml');
    // Folders, not a subPath: the kubelet updates them when the ConfigMap or Secret changes.
    const mounts = pod.containers[0]?.volumeMounts.filter((m) => m.name.startsWith('notification'));
    expect(mounts).toEqual([
      { name: 'notifications', mountPath: '/etc/janus/notifications/config', readOnly: true },
      { name: 'notification-secrets', mountPath: '/etc/janus/notifications/secrets', readOnly: true },
    ]);
    expect(pod.volumes.find((v) => v.name === 'notifications')?.configMap?.name).toBe(
      `${RELEASE}-notifications`,
    );
    expect(pod.volumes.find((v) => v.name === 'notification-secrets')?.secret).toEqual({
      secretName: 'janus-notifications',
      defaultMode: 288,
    });
    // Off by default: nothing of it is rendered.
    const plain = JSON.stringify(template(RELEASE, NAMESPACE));
    expect(plain).not.toContain('JANUS_NOTIFICATIONS_CONFIG');
    expect(plain).not.toContain('notification');
  });

  it('a public webhook Service targets the webhook listener alone, never the metrics port (issue 21, finding 8)', () => {
    const chart = template(
      RELEASE,
      NAMESPACE,
      '--set',
      'webhook.enabled=true,webhook.service.type=LoadBalancer,git.repository=https://git.example/changes',
      '--set',
      'git.token=a-token,git.webhookSecret=a-secret',
    );
    type Service = KubeObject & { spec: { type?: string; ports: { name: string; targetPort: string }[] } };
    const services = chart.filter((o) => o.kind === 'Service') as Service[];
    const exposed = services.filter((s) => s.spec.type === 'LoadBalancer');
    expect(exposed.map((s) => s.metadata.name)).toEqual([`${RELEASE}-webhook`]);
    expect(exposed[0]?.spec.ports.map((p) => p.targetPort)).toEqual(['webhook']);
    expect(JSON.stringify(exposed)).not.toContain('metrics');
    // The metrics port stays on the ClusterIP Service.
    const internal = services.find((s) => s.metadata.name === RELEASE);
    expect(internal?.spec.type).toBe('ClusterIP');
    expect(internal?.spec.ports.map((p) => p.name)).toEqual(['http']);
    // Without a listener of its own, /webhook shares port http with /metrics: refused when public.
    const shared = helm([
      'template',
      RELEASE,
      CHART,
      '--set',
      'webhook.enabled=true,webhook.ownListener=false,service.type=LoadBalancer',
      '--set',
      'git.repository=https://git.example/changes,git.token=t,git.webhookSecret=w',
    ]);
    expect(shared.status).not.toBe(0);
    expect(shared.stderr).toContain('keep service.type ClusterIP');
  });

  it('helm template | kubectl apply --dry-run=server -f -: the API server accepts every object, with no Pod Security warning', () => {
    const rendered = check(
      helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, '--include-crds']),
      'helm template',
    );
    const applied = kubectl(['apply', '--dry-run=server', '-f', '-'], rendered);
    expect(applied.status, applied.stderr).toBe(0);
    expect(applied.stderr).not.toMatch(/PodSecurity|would violate/);
    expect(applied.stdout.trim().split('\n')).toHaveLength(objectsOf(rendered).length);
  });

  it('helm install: its controller, run as the Deployment would run it, takes a sample Transaction to Committed', async () => {
    const installed = await install(RELEASE, sampleValues(repo));
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.stderr).not.toMatch(/PodSecurity|would violate/);
    expect(installed.stdout).toMatch(/STATUS: deployed/);

    // The opt-in, exactly as NOTES.txt prints it, for the sample namespace instead of "shop".
    const optIn = /^\s*(kubectl create rolebinding [^\n]*\\\n[^\n]*)$/m.exec(installed.stdout)?.[1];
    if (!optIn) throw new Error(`NOTES.txt prints no kubectl create rolebinding:\n${installed.stdout}`);
    const samples = objectsOf(check(kubectl(['kustomize', 'manifests/samples/']), 'kubectl kustomize'))
      // janus-tenant binds manifests/' controller: the NOTES command replaces it.
      .filter((o) => !(o.kind === 'RoleBinding' && o.metadata.name === 'janus-tenant'))
      .map((o) =>
        o.kind === 'Namespace'
          ? { ...o, metadata: { ...o.metadata, name: SAMPLE_NAMESPACE } }
          : {
              ...o,
              metadata: { ...o.metadata, namespace: SAMPLE_NAMESPACE },
              ...('subjects' in o && {
                subjects: (o.subjects as { namespace: string }[]).map((s) => ({
                  ...s,
                  namespace: SAMPLE_NAMESPACE,
                })),
              }),
            },
      );
    const list = (items: KubeObject[]) => stringify({ apiVersion: 'v1', kind: 'List', items });
    const of = (...kinds: string[]) => samples.filter((o) => kinds.includes(o.kind));
    check(kubectl(['apply', '-f', '-'], list(of('Namespace'))), 'kubectl apply');
    const bound = spawnSync('bash', ['-c', optIn.replaceAll(' -n shop ', ` -n ${SAMPLE_NAMESPACE} `)], {
      encoding: 'utf8',
      env: { PATH: `${kube.binDir ?? ''}:${process.env.PATH ?? ''}`, KUBECONFIG: kube.kubeconfigs.admin },
    });
    expect(bound.status, `${optIn}\n${bound.stderr}`).toBe(0);
    check(kubectl(['apply', '-f', '-'], list(of('ServiceAccount', 'Role', 'RoleBinding'))), 'kubectl apply');

    pod = await runReleasePod(RELEASE);
    expect(pod.env).toMatchObject({
      JANUS_REPO: repo,
      JANUS_CONTROLLER_NAMESPACE: NAMESPACE,
      JANUS_WATCH_NAMESPACE: SAMPLE_NAMESPACE,
      JANUS_ALLOWED_NAMESPACES: SAMPLE_NAMESPACE,
      JANUS_ALLOWED_SERVICE_ACCOUNTS: 'sample-deployer',
    });
    expect(await readFile(pod.env.JANUS_GIT_TOKEN_FILE ?? '', 'utf8')).toBe(
      'not-needed-for-a-local-repository',
    );

    const transactions = samples.filter((o) => o.kind === 'Transaction');
    check(
      kubectl(['create', '-f', '-'], stringify({ apiVersion: 'v1', kind: 'List', items: transactions })),
      'txn',
    );
    const txn = await eventually(
      async () => {
        if (pod?.child.exitCode !== null)
          throw new Error(`the container exited:\n${await readFile(pod?.logFile ?? '', 'utf8')}`);
        const current = (await clients.admin.get({
          apiVersion: 'tx.janus.io/v1alpha1',
          kind: 'Transaction',
          name: 'hello',
          namespace: SAMPLE_NAMESPACE,
        })) as unknown as Transaction;
        expect(current.status?.phase).toBe('Committed');
        return current;
      },
      { timeoutMs: 120_000 },
    );
    expect(txn.status?.progress).toBe('2/2');
    const greeting = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'greeting',
      namespace: SAMPLE_NAMESPACE,
    });
    expect(greeting.data).toEqual({ message: 'Hello from Janus' });
    // It took the leader Lease in the release's namespace, not in janus-system: janus-controller, as
    // the default installation (no instance) does.
    const lease = await clients.admin.get({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      name: 'janus-controller',
      namespace: NAMESPACE,
    });
    expect((lease.spec as { holderIdentity?: string }).holderIdentity).toBeTruthy();

    pod.child.kill('SIGTERM');
    expect(await pod.exited).toBe(0);
  });

  it('helm install of a second release beside it (instance green): each reconciles only its own Transactions, both lead at once', async () => {
    const greenRepo = await localRepository('janus-helm-green-', "The second release's repository.\n");
    try {
      const installed = await install(SECOND_RELEASE, { ...sampleValues(greenRepo), instance: 'green' });
      expect(installed.status, installed.stderr).toBe(0);
      expect(installed.stdout).toContain('only the Transactions labelled tx.janus.io/instance=green');
      // The sample namespace opts in to the second release too, with its names.
      check(
        kubectl([
          'create',
          'rolebinding',
          `${SECOND_RELEASE}-tenant`,
          '-n',
          SAMPLE_NAMESPACE,
          `--clusterrole=${SECOND_RELEASE}-tenant`,
          `--serviceaccount=${NAMESPACE}:${SECOND_RELEASE}-controller`,
        ]),
        'kubectl create rolebinding',
      );
      const first = await runReleasePod(RELEASE);
      const green = await runReleasePod(SECOND_RELEASE);
      expect(green.env).toMatchObject({ JANUS_INSTANCE: 'green' });

      const txn = (name: string, labels: Record<string, string> | undefined) => ({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Transaction',
        metadata: { name, namespace: SAMPLE_NAMESPACE, ...(labels && { labels }) },
        spec: {
          serviceAccountName: 'sample-deployer',
          changes: [
            {
              target: { apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-made` },
              type: 'Create',
              content: { data: { by: name } },
            },
          ],
        },
      });
      await clients.admin.create(txn('for-green', { 'tx.janus.io/instance': 'green' }));
      await clients.admin.create(txn('for-default', undefined));
      for (const name of ['for-green', 'for-default'])
        await eventually(
          async () => {
            for (const p of [first, green])
              if (p.child.exitCode !== null)
                throw new Error(`a container exited:\n${await readFile(p.logFile, 'utf8')}`);
            const current = (await clients.admin.get({
              apiVersion: 'tx.janus.io/v1alpha1',
              kind: 'Transaction',
              name,
              namespace: SAMPLE_NAMESPACE,
            })) as unknown as Transaction;
            expect(current.status?.phase).toBe('Committed');
          },
          { timeoutMs: 120_000 },
        );
      // Each told the story of its own transaction only (one line per phase, at info).
      const [firstLog, greenLog] = [
        await readFile(first.logFile, 'utf8'),
        await readFile(green.logFile, 'utf8'),
      ];
      expect(greenLog).toContain(`"transaction":"${SAMPLE_NAMESPACE}/for-green"`);
      expect(greenLog).not.toContain(`${SAMPLE_NAMESPACE}/for-default`);
      expect(firstLog).toContain(`"transaction":"${SAMPLE_NAMESPACE}/for-default"`);
      expect(firstLog).not.toContain(`${SAMPLE_NAMESPACE}/for-green`);
      // Both lead at once, in one namespace, each under the Lease of its instance.
      for (const name of ['janus-controller', 'janus-controller-green']) {
        const lease = await clients.admin.get({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          name,
          namespace: NAMESPACE,
        });
        expect((lease.spec as { holderIdentity?: string }).holderIdentity, name).toBeTruthy();
      }
      // Issue 34, round 4, item 3: a third release of the default instance, installed in another
      // namespace on the sample namespace the first serves, is refused before anything is
      // installed, naming the first (its InstanceClaim); before, it installed and both drove the
      // sample's Transactions.
      const thirdNamespace = `janus-helm-third-${suffix}`;
      await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: thirdNamespace } });
      try {
        const values = join(helmHome, 'third.values.yaml');
        await writeFile(values, stringify(sampleValues(greenRepo)));
        const refused = helmOnCluster(
          'install',
          'janus-helm-third',
          CHART,
          '--namespace',
          thirdNamespace,
          '--values',
          values,
        );
        expect(refused.status).not.toBe(0);
        expect(refused.stderr).toContain(
          `the installation in namespace ${NAMESPACE} (InstanceClaim janus.${SAMPLE_NAMESPACE}, renewed`,
        );
        expect(refused.stderr).toContain(`serves the default instance for namespace ${SAMPLE_NAMESPACE}`);
        expect(refused.stderr).toContain('Set instance to a name of its own');
        expect(helmOnCluster('status', 'janus-helm-third', '--namespace', thirdNamespace).status).not.toBe(0);
      } finally {
        await clients.admin
          .delete({ apiVersion: 'v1', kind: 'Namespace', name: thirdNamespace })
          .catch(() => {});
      }
      for (const p of [first, green]) {
        p.child.kill('SIGTERM');
        expect(await p.exited).toBe(0);
      }
    } finally {
      helmOnCluster('uninstall', SECOND_RELEASE, '--namespace', NAMESPACE, '--wait');
      await rm(greenRepo, { recursive: true, force: true });
    }
  });

  it('helm upgrade changes a setting and restarts the pods; helm uninstall removes the release and keeps the CRD', async () => {
    const deploymentRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: RELEASE, namespace: NAMESPACE };
    const before = podTemplate(await clients.admin.get(deploymentRef)).metadata.annotations?.[
      'checksum/settings'
    ];
    const upgraded = helmOnCluster(
      'upgrade',
      RELEASE,
      CHART,
      '--namespace',
      NAMESPACE,
      '--reuse-values',
      '--set',
      'logLevel=debug',
    );
    expect(upgraded.status, upgraded.stderr).toBe(0);
    const settings = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: `${RELEASE}-settings`,
      namespace: NAMESPACE,
    });
    expect(settings.data).toMatchObject({
      JANUS_LOG_LEVEL: 'debug',
      JANUS_WATCH_NAMESPACE: SAMPLE_NAMESPACE,
    });
    const after = podTemplate(await clients.admin.get(deploymentRef)).metadata.annotations?.[
      'checksum/settings'
    ];
    expect(after).toBeDefined();
    expect(after).not.toBe(before);

    const chart = template(RELEASE, NAMESPACE).filter((o) => o.kind !== 'CustomResourceDefinition');
    const uninstalled = helmOnCluster('uninstall', RELEASE, '--namespace', NAMESPACE, '--wait');
    expect(uninstalled.status, uninstalled.stderr).toBe(0);
    await eventually(async () => {
      for (const obj of chart) {
        const ref = {
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          name: obj.metadata.name,
          namespace: obj.metadata.namespace,
        };
        expect(await clients.admin.find(ref), id(obj)).toBeUndefined();
      }
    });
    // Shared with every other test, and with the kustomize install: helm never deletes crds/.
    expect(
      await clients.admin.find({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: 'transactions.tx.janus.io',
      }),
    ).toBeDefined();
  });
});
