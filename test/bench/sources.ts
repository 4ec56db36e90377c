/**
 * A source at scale (docs/sources.md, issue 35's acceptance): a Helm chart rendering 500 objects
 * (ConfigMaps, Services, Deployments), applied by a real `janus run` through the counting proxy,
 * then one commit changing 10 of them (4 ConfigMaps, 3 Services, 3 Deployments' images), learnt
 * of by a webhook. Measured per run:
 *
 * - render time: the chart rendered by the real helm in the sandbox (the Renderer `janus run`
 *   uses, the bench's own process);
 * - API requests per changed object of commit 2, everything `janus run` sends from the push to
 *   the Source's status recording it (the poll, the Source's status, the Transaction and its
 *   saga), watches excepted; beside `kubectl apply --server-side --prune --applyset` (the prune
 *   kubectl has for server-side apply) of the same two renders into a namespace of its own (its
 *   requests for the second, discovery cache warm);
 * - `janus run`'s peak resident memory (VmHWM) over the whole run, the first apply included;
 * - time from the push (and its webhook) to Committed, and of the first apply of 500 objects.
 */

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { Source, Transaction } from '../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../src/kube/resources.ts';
import { Renderer } from '../../src/render/renderer.ts';
import type { RenderRequest } from '../../src/render/types.ts';
import { testNamespace, txnRef } from '../support/cluster/saga.ts';
import { pushCommit, startGitServer } from '../support/git/git-server.ts';
import { deliverGithubPush } from '../support/git/github-push.ts';
import { sourceRepository } from '../support/git/source-repo.ts';
import { successfulPolls } from '../support/git/transaction-repo.ts';
import { startJanusRun } from '../support/processes/janus-run.ts';
import { renderTools } from '../support/servers/render-tools.ts';
import { type Bench, timeUntil } from './harness.ts';
import { memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const OBJECTS = 500;
/** The objects commit 2 changes: svc-000 … svc-009 (4 ConfigMaps, 3 Services, 3 Deployments). */
const CHANGED = 10;
const SECRET = 'bench-webhook-secret';
const DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps', 'services'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];

/** A chart of OBJECTS objects; `revision` 2 changes the first CHANGED. */
function chart(revision: 1 | 2): Record<string, string> {
  const changed = Object.fromEntries(
    Array.from({ length: CHANGED }, (_, i) => [`svc-${String(i).padStart(3, '0')}`, String(revision)]),
  );
  return {
    'charts/shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 1.0.0\n',
    'charts/shop/values.yaml': `count: ${OBJECTS}\n`,
    'charts/shop/values-prod.yaml': stringify({ revision: changed }),
    'charts/shop/templates/objects.yaml': `{{- range $i := until (int .Values.count) }}
{{- $name := printf "svc-%03d" $i }}
{{- $revision := index $.Values.revision $name | default "1" }}
---
{{- if eq (mod $i 3) 0 }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}-config
  labels: {app.kubernetes.io/instance: {{ $.Release.Name }}, app: {{ $name }}}
data:
  revision: {{ $revision | quote }}
  log-level: info
  endpoint: http://{{ $name }}.{{ $.Release.Namespace }}.svc:80
{{- else if eq (mod $i 3) 1 }}
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels: {app.kubernetes.io/instance: {{ $.Release.Name }}, app: {{ $name }}}
  annotations: {shop.example/revision: {{ $revision | quote }}}
spec:
  clusterIP: None  # headless: two namespaces of 167 Services would not fit the test cluster's /24
  selector: {app: {{ $name }}}
  ports: [{name: http, port: 80, targetPort: 8080}]
{{- else }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels: {app.kubernetes.io/instance: {{ $.Release.Name }}, app: {{ $name }}}
spec:
  replicas: {{ if lt $i 30 }}1{{ else }}0{{ end }}
  selector: {matchLabels: {app: {{ $name }}}}
  template:
    metadata: {labels: {app: {{ $name }}}}
    spec:
      containers:
      - name: app
        image: registry.example/web:v{{ $revision }}
        ports: [{containerPort: 8080}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
{{- end }}
{{- end }}
`,
  };
}

const SOURCE_FILE = (namespace: string) =>
  stringify({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Source',
    metadata: { name: 'shop', namespace },
    spec: {
      path: 'charts/shop',
      helm: { valuesFiles: ['values.yaml', 'values-prod.yaml'] },
      serviceAccountName: 'deployer',
      prune: true,
      health: { timeout: '5m' },
      timeout: '30m',
    },
  });

const request = (namespace: string): RenderRequest => ({
  path: 'charts/shop',
  namespace,
  method: {
    kind: 'helm',
    releaseName: 'shop',
    valuesFiles: ['values.yaml', 'values-prod.yaml'],
    values: {},
    includeCRDs: true,
    hooks: 'Ignore',
    apiVersions: [],
  },
});

/** The chart's two renders, by the real helm in the sandbox: each one's time, and the objects. */
async function renders(namespace: string): Promise<{ ms: number[]; objects: KubeObject[][] }> {
  const repo = await sourceRepository();
  const renderer = new Renderer({ tools: renderTools() });
  const ms: number[] = [];
  const objects: KubeObject[][] = [];
  try {
    for (const revision of [1, 2] as const) {
      const commit = await repo.commit(chart(revision));
      const started = performance.now();
      const result = await renderer.render({
        source: `${namespace}/shop`,
        request: request(namespace),
        checkout: () => repo.checkout(commit),
      });
      ms.push(performance.now() - started);
      if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.failure)}`);
      if (result.objects.length !== OBJECTS) throw new Error(`rendered ${result.objects.length} objects`);
      objects.push(result.objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace } })));
    }
    return { ms, objects };
  } finally {
    renderer.stop();
    await rm(repo.dir, { recursive: true, force: true });
  }
}

/** `kubectl apply --server-side --prune` of render 1, then (counted) render 2, in a namespace of its own. */
async function kubectlApplyRequests(b: Bench, namespace: string, objects: KubeObject[][]): Promise<number> {
  const kubectl = join(b.env.info.binDir ?? '', 'kubectl');
  const dir = await mkdtemp(join(tmpdir(), 'janus-bench-sources-'));
  try {
    const apply = async (render: KubeObject[]) => {
      await writeFile(join(dir, 'render.yaml'), render.map((o) => stringify(o)).join('---\n'));
      await promisify(execFile)(
        kubectl,
        [
          '--kubeconfig',
          b.proxied.admin,
          '--cache-dir',
          join(dir, 'cache'),
          'apply',
          '--server-side',
          '--force-conflicts',
          '--field-manager=bench',
          // Pruning with server-side apply is ApplySet's (the older --prune -l refuses it).
          '--prune',
          '--applyset=shop',
          '-n',
          namespace,
          '-f',
          join(dir, 'render.yaml'),
        ],
        { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECTL_APPLYSET: 'true' } },
      );
    };
    await apply(objects[0] ?? []); // creates them and warms the discovery cache
    b.proxy.reset();
    await apply(objects[1] ?? []);
    return b.proxy.requests.filter((r) => !r.watch).length;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Run {
  renderMs: number;
  firstApplyMs: number;
  pushToCommittedMs: number;
  janusRequests: number;
  kubectlRequests: number;
  peakMiB: number;
}

async function committed(b: Bench, namespace: string, name: string): Promise<number> {
  const started = performance.now();
  await timeUntil(
    async () => {
      const txn = (await b.admin.find(txnRef(namespace, name))) as unknown as Transaction | undefined;
      const phase = txn?.status?.phase;
      if (phase === 'RolledBack' || phase === 'Failed') throw new Error(`${name} ended ${phase}`);
      return phase === 'Committed';
    },
    1_200_000,
    20,
  );
  return performance.now() - started;
}

/** Waits until the Source records `commit` as applied, and its transaction's locks are released. */
async function settled(b: Bench, namespace: string, commit: string, txn: string): Promise<void> {
  await timeUntil(
    async () => {
      const source = (await b.admin.find({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Source',
        namespace,
        name: 'shop',
      })) as unknown as Source | undefined;
      const done = (await b.admin.find(txnRef(namespace, txn))) as unknown as Transaction | undefined;
      return source?.status?.lastApplied?.revision === commit && !done?.metadata.finalizers?.length;
    },
    600_000,
    50,
  );
}

async function run(b: Bench): Promise<Run> {
  const namespace = await testNamespace(b.admin, 'bench-sources', { deployer: DEPLOYER });
  const kubectlNamespace = await testNamespace(b.admin, 'bench-sources-kubectl');
  const rendered = await renders(namespace);
  const kubectlRequests = await kubectlApplyRequests(
    b,
    kubectlNamespace,
    rendered.objects.map((render) =>
      render.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: kubectlNamespace } })),
    ),
  );
  const server = await startGitServer();
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-sources-'));
  await writeFile(join(scratch, 'webhook-secret'), SECRET);
  const bare = await server.createRepo(namespace);
  await pushCommit(bare, 'main', { 'README.md': 'sources\n' }, 'initial commit');
  const tools = renderTools();
  const janus = await startJanusRun({
    kubeconfig: b.proxied.controller,
    repo: server.url(namespace),
    namespace,
    pollInterval: '1h',
    logLevel: 'info',
    args: [
      '--webhook-secret-file',
      join(scratch, 'webhook-secret'),
      '--kustomize-path',
      tools.kustomize,
      '--helm-path',
      tools.helm,
    ],
  });
  try {
    await timeUntil(async () => (await successfulPolls(janus)) >= 1, 120_000, 100);
    const opsUrl = await janus.opsUrl();
    const first = await pushCommit(
      bare,
      'main',
      { 'sources/shop.yaml': SOURCE_FILE(namespace), ...chart(1) },
      'the chart',
    );
    await deliverGithubPush(opsUrl, first, SECRET);
    const firstApplyMs = await committed(b, namespace, `shop-${first.slice(0, 7)}`);
    await settled(b, namespace, first, `shop-${first.slice(0, 7)}`);

    b.proxy.reset();
    const second = await pushCommit(bare, 'main', chart(2), '10 objects changed');
    const pushed = performance.now();
    await deliverGithubPush(opsUrl, second, SECRET);
    const name = `shop-${second.slice(0, 7)}`;
    await committed(b, namespace, name);
    const pushToCommittedMs = performance.now() - pushed;
    await settled(b, namespace, second, name);
    const changes = ((await b.admin.find(txnRef(namespace, name))) as unknown as Transaction).spec.changes;
    if (changes.length !== CHANGED)
      throw new Error(`commit 2 made ${changes.length} changes, not ${CHANGED}`);
    await new Promise((r) => setTimeout(r, 1000)); // trailing requests (none expected)
    const janusRequests = b.proxy.requests.filter((r) => !r.watch).length;
    const peakMiB = await memoryMiB(janus.child.pid ?? 0, 'VmHWM');
    return {
      renderMs: rendered.ms[1] ?? Number.NaN,
      firstApplyMs,
      pushToCommittedMs,
      janusRequests,
      kubectlRequests,
      peakMiB,
    };
  } catch (error) {
    const log = (await janus.logs()).slice(-10_000);
    throw new Error(`${(error as Error).message}\n--- janus run log (tail) ---\n${log}`, { cause: error });
  } finally {
    await janus.stop();
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
    for (const ns of [namespace, kubectlNamespace])
      await b.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
  }
}

export async function sources(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const results: Run[] = [];
  for (let r = 0; r < runs; r++) results.push(await run(b));
  const of = (pick: (r: Run) => number, unit: string) => figure(results.map(pick), unit);
  const what = `${OBJECTS}-object chart, one commit changing ${CHANGED}`;
  return {
    [`${OBJECTS}-object chart: render time (helm template, sandboxed)`]: of((r) => r.renderMs, 'ms'),
    [`${what}: janus run API requests per changed object (push → Source status written)`]: of(
      (r) => r.janusRequests / CHANGED,
      'req/object',
    ),
    [`${what}: kubectl apply --server-side --prune of the same renders, requests per changed object`]: of(
      (r) => r.kubectlRequests / CHANGED,
      'req/object',
    ),
    [`${what}: janus run's requests ÷ kubectl's (target ≤ 1.5)`]: of(
      (r) => r.janusRequests / r.kubectlRequests,
      '×',
    ),
    [`${what}: push (webhook) → Committed`]: of((r) => r.pushToCommittedMs, 'ms'),
    [`${OBJECTS}-object chart's first apply: push (webhook) → Committed`]: of((r) => r.firstApplyMs, 'ms'),
    'janus run peak resident memory (VmHWM), whole run (target < 200 MiB)': of((r) => r.peakMiB, 'MiB'),
  };
}
