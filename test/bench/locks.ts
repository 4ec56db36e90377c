/**
 * What locks that block cost every write (docs/security.md, "Locks that block"): the latency of
 * one write and the kube-apiserver's CPU for it, with no policy installed and with the policy
 * janus-locks, in namespaces that hold 0 (an empty LockTable), 100 and 1,000 locks (a write reads
 * its own namespace's table, so that is the worst case for 1,000 locks held in the cluster), in
 * one that opted in but has no LockTable (the policy finds no parameter: nothing is evaluated),
 * and in one that did not opt in. Writes to an unlocked ConfigMap as the administrator, and to a
 * locked one as its holder (its ServiceAccount with the Transaction's uid, as the controller
 * writes it: the write that goes through the whole rule).
 *
 * The machine is shared and its load moves, so the series are interleaved: each round measures
 * every series in blocks of BLOCK writes taking turns, WRITES writes each, once with the policy
 * removed and once installed (which half first alternates), and the tables stay as they are.
 *
 * Then the design this replaced: the same rule with a ConfigMap per namespace as the parameter,
 * a key per lock. The API server converts a typed parameter to unstructured on every evaluation,
 * so that cost grows with the locks in the namespace; a custom resource's parameter is
 * unstructured already and is not copied. Measured last, installed once: a ConfigMap parameter's
 * informer in the API server freezes for good once no binding names its kind (kubernetes#130887).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOCK_TABLE_API_VERSION,
  LOCK_TABLE_KIND,
  LOCK_TABLE_NAME,
  type LockEntry,
  TRANSACTION_UID_EXTRA,
} from '../../src/api/v1alpha1/index.ts';
import { readManifests } from '../../src/cli/demo/manifests.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { PatchType } from '../../src/kube/client.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import type { KubeObject } from '../../src/kube/resources.ts';
import { REPO_ROOT } from '../support/cluster/manifests.ts';
import { ALL_ON_CONFIGMAPS, configMap, testNamespace } from '../support/cluster/saga.ts';
import type { Bench } from './harness.ts';
import { cpuSeconds } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const WRITES = 500;
const BLOCK = 50;
/** Writes of every series before a half is measured, after the policy changed. */
const WARM_UP = 100;
/** Locks per field manager: ten targets per Transaction. */
const PER_TRANSACTION = 10;
const VARIANT_LABEL = 'bench.janus.io/configmap-locks';

interface Series {
  name: string;
  client: KubeClient;
  path: string;
  latencies: number[];
  cpuSeconds: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** WRITES merge patches per series, in blocks of BLOCK taking turns; the API server's CPU per block. */
async function interleaved(series: Series[], apiserver: number): Promise<void> {
  const patch = (s: Series, i: number) =>
    s.client.request({
      method: 'PATCH',
      path: s.path,
      body: { data: { v: String(i) } },
      contentType: PatchType.merge,
    });
  for (const s of series) {
    s.latencies = [];
    s.cpuSeconds = 0;
  }
  for (let i = 0; i < WARM_UP; i++) for (const s of series) await patch(s, i);
  for (let block = 0; block * BLOCK < WRITES; block++) {
    for (const s of series) {
      const cpuBefore = await cpuSeconds(apiserver);
      for (let i = 0; i < BLOCK; i++) {
        const started = performance.now();
        await patch(s, i);
        s.latencies.push(performance.now() - started);
      }
      s.cpuSeconds += (await cpuSeconds(apiserver)) - cpuBefore;
    }
  }
}

/** The ConfigMap variant of the policy: the same rule, its parameter the ConfigMap janus-locks-cm. */
function configMapVariant(policy: KubeObject, binding: KubeObject): KubeObject[] {
  const spec = structuredClone(policy.spec) as {
    paramKind: unknown;
    variables: { name: string; expression: string }[];
    validations: { expression: string; messageExpression?: string }[];
  };
  spec.paramKind = { apiVersion: 'v1', kind: 'ConfigMap' };
  const key = "variables.resource + '.' + request.name";
  for (const v of spec.variables) {
    if (v.name === 'locked') v.expression = `has(params.data) && ${key} in params.data`;
    if (v.name === 'holder')
      v.expression = `variables.locked && params.data[${key}] == request.userInfo.username`;
  }
  for (const v of spec.validations) v.messageExpression = `'locked by ' + params.data[${key}]`;
  const bindingSpec = structuredClone(binding.spec) as {
    policyName: string;
    paramRef: { name: string };
    matchResources: { namespaceSelector: unknown };
  };
  bindingSpec.policyName = 'janus-locks-cm';
  bindingSpec.paramRef.name = 'janus-locks-cm';
  bindingSpec.matchResources.namespaceSelector = { matchLabels: { [VARIANT_LABEL]: 'on' } };
  return [
    { ...policy, metadata: { name: 'janus-locks-cm' }, spec },
    { ...binding, metadata: { name: 'janus-locks-cm-deny' }, spec: bindingSpec },
  ] as KubeObject[];
}

const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
const holderOf = (ns: string) => `system:serviceaccount:${ns}:deployer`;

type Sample = { p50: number; p99: number; cpuMs: number };

/** The figures of a run: every sample under its name, for figure(). */
class Results {
  readonly #values = new Map<string, number[]>();

  add(name: string, value: number): void {
    this.#values.set(name, [...(this.#values.get(name) ?? []), value]);
  }

  /** A series' p50, p99 and CPU per write, recorded under `label`. */
  record(label: string, s: Series): Sample {
    const sorted = [...s.latencies].sort((a, b) => a - b);
    const sample = {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      cpuMs: (s.cpuSeconds * 1000) / WRITES,
    };
    this.add(`${label}: write, p50`, sample.p50);
    this.add(`${label}: write, p99`, sample.p99);
    this.add(`${label}: write, kube-apiserver CPU`, sample.cpuMs);
    process.stderr.write(
      `locks: ${label}: p50 ${sample.p50.toFixed(2)} p99 ${sample.p99.toFixed(2)} ms, CPU ${sample.cpuMs.toFixed(2)} ms/write\n`,
    );
    return sample;
  }

  figures(): Record<string, Figure> {
    const out: Record<string, Figure> = {};
    for (const [name, values] of this.#values)
      out[name] = figure(values, name.includes('CPU') ? 'ms/write' : 'ms');
    return out;
  }
}

/** A namespace with the ConfigMaps unlocked and locked-0, and the ServiceAccount deployer. */
async function shopNamespace(b: Bench, label: string, labels?: Record<string, string>): Promise<string> {
  const ns = await testNamespace(b.admin, `bench-locks-${label}`, {
    deployer: [ALL_ON_CONFIGMAPS],
    ...(labels && { labels }),
  });
  for (const name of ['unlocked', 'locked-0']) await b.admin.create(configMap(ns, name, { v: '0' }));
  return ns;
}

/** `count` locks (locked-0 …), ten per Transaction, in the namespace's LockTable (0: an empty one). */
async function lockTable(b: Bench, ns: string, count: number): Promise<void> {
  const table = {
    apiVersion: LOCK_TABLE_API_VERSION,
    kind: LOCK_TABLE_KIND,
    metadata: { name: LOCK_TABLE_NAME, namespace: ns },
  };
  if (count === 0) await b.admin.apply(table as KubeObject, { fieldManager: 'bench', force: true });
  for (let t = 0; t * PER_TRANSACTION < count; t++) {
    const entry: LockEntry = {
      transaction: `t${t}`,
      namespace: ns,
      uid: `bench-${t}`,
      user: holderOf(ns),
      phase: 'Verifying',
    };
    const keys = Array.from(
      { length: PER_TRANSACTION },
      (_, i) => `configmaps/locked-${t * PER_TRANSACTION + i}`,
    );
    await b.admin.apply(
      {
        apiVersion: LOCK_TABLE_API_VERSION,
        kind: LOCK_TABLE_KIND,
        metadata: { name: LOCK_TABLE_NAME, namespace: ns },
        spec: { locks: Object.fromEntries(keys.map((k) => [k, entry])) },
      } as KubeObject,
      { fieldManager: `janus-lock:bench-${t}`, force: true },
    );
  }
}

/** Until the administrator's write to `path` (a locked ConfigMap) is refused (`refused`) or allowed. */
async function enforced(admin: KubeClient, path: string, refused: boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    let wasRefused = false;
    try {
      await admin.request({
        method: 'PATCH',
        path,
        body: { data: { p: '1' } },
        contentType: PatchType.merge,
      });
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 403)) throw e;
      wasRefused = true;
    }
    if (wasRefused === refused) return;
    if (Date.now() > deadline)
      throw new Error(`${path}: still ${refused ? 'allowed' : 'refused'} after 60 s`);
    await sleep(100);
  }
}

/** Installs the shipped policy (or removes it) and waits until the API server enforces that. */
async function shippedPolicy(b: Bench, shipped: KubeObject[], on: boolean, probe: string): Promise<void> {
  for (const obj of shipped) {
    if (on) await b.admin.apply(obj, { fieldManager: 'bench', force: true });
    else await b.admin.delete({ ...obj, name: obj.metadata.name }).catch(() => {});
  }
  await enforced(b.admin.client, probe, on);
}

/** The shipped policy, off then on (or on then off), every series interleaved in each half. */
async function policyRounds(b: Bench, rounds: number, results: Results): Promise<void> {
  const admin = b.admin.client;
  const shipped = await readManifests(`${REPO_ROOT}/manifests/policy/locks.yaml`);
  const plain = await shopNamespace(b, 'plain');
  // Opted in, no LockTable: the policy finds no parameter and evaluates nothing.
  const untouched = await shopNamespace(b, 'no-table', { 'tx.janus.io/locks': 'Deny' });
  const opted = new Map<number, string>();
  for (const count of [0, 100, 1000]) {
    const ns = await shopNamespace(b, `${count}`, { 'tx.janus.io/locks': 'Deny' });
    await lockTable(b, ns, count);
    opted.set(count, ns);
  }
  const at = (count: number) => opted.get(count) as string;
  const unlocked: Series[] = [
    { name: 'not opted in', client: admin, path: cmPath(plain, 'unlocked'), latencies: [], cpuSeconds: 0 },
    {
      name: 'no LockTable',
      client: admin,
      path: cmPath(untouched, 'unlocked'),
      latencies: [],
      cpuSeconds: 0,
    },
    ...[0, 100, 1000].map((count) => ({
      name: count === 0 ? '0 locks (an empty LockTable)' : `${count.toLocaleString('en')} locks`,
      client: admin,
      path: cmPath(at(count), 'unlocked'),
      latencies: [],
      cpuSeconds: 0,
    })),
  ];
  const byHolder: Series[] = [100, 1000].map((count) => ({
    name: `${count.toLocaleString('en')} locks, by its holder`,
    client: admin.as(holderOf(at(count)), { [TRANSACTION_UID_EXTRA]: 'bench-0' }),
    path: cmPath(at(count), 'locked-0'),
    latencies: [],
    cpuSeconds: 0,
  }));
  const probe = cmPath(at(1000), 'locked-0');
  for (let round = 0; round < rounds; round++) {
    const halves = round % 2 === 0 ? [false, true] : [true, false];
    const samples = new Map<boolean, Sample>();
    for (const on of halves) {
      await shippedPolicy(b, shipped, on, probe);
      const series = on ? [...unlocked, ...byHolder] : unlocked;
      await interleaved(series, b.env.pids[1] ?? 0);
      const half = on ? 'janus-locks' : 'no policy';
      for (const s of series) {
        const sample = results.record(`${half}, ${s.name}`, s);
        if (s.name === '1,000 locks') samples.set(on, sample);
      }
    }
    // The same object in the same round: the policy's cost where 1,000 locks are held.
    const [off, on] = [samples.get(false), samples.get(true)];
    if (off && on) {
      results.add('1,000 locks, janus-locks minus no policy: p50 of a write', on.p50 - off.p50);
      results.add('1,000 locks, janus-locks minus no policy: p99 of a write', on.p99 - off.p99);
      results.add(
        '1,000 locks, janus-locks minus no policy: kube-apiserver CPU of a write',
        on.cpuMs - off.cpuMs,
      );
    }
  }
  await shippedPolicy(b, shipped, true, probe);
}

/** The replaced design, installed once (see above): 0 and 1,000 locks interleaved likewise. */
async function configMapRounds(b: Bench, rounds: number, results: Results): Promise<void> {
  const shipped = await readManifests(`${REPO_ROOT}/manifests/policy/locks.yaml`);
  const policy = shipped.find((o) => o.kind === 'ValidatingAdmissionPolicy') as KubeObject;
  const denyBinding = shipped.find((o) => o.metadata.name === 'janus-locks-deny') as KubeObject;
  const variant = configMapVariant(policy, denyBinding);
  const series: Series[] = [];
  for (const count of [0, 1000]) {
    const ns = await shopNamespace(b, `cm-${count}`, { [VARIANT_LABEL]: 'on' });
    const data = Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`configmaps.locked-${i}`, holderOf(ns)]),
    );
    await b.admin.create(configMap(ns, 'janus-locks-cm', data));
    const name = `a ConfigMap as parameter (replaced), ${count.toLocaleString('en')} locks`;
    series.push({ name, client: b.admin.client, path: cmPath(ns, 'unlocked'), latencies: [], cpuSeconds: 0 });
    if (count === 0) continue;
    for (const obj of variant) await b.admin.apply(obj, { fieldManager: 'bench', force: true });
    await enforced(b.admin.client, cmPath(ns, 'locked-0'), true);
  }
  for (let round = 0; round < rounds; round++) {
    await interleaved(series, b.env.pids[1] ?? 0);
    for (const s of series) results.record(s.name, s);
  }
  for (const obj of variant) await b.admin.delete({ ...obj, name: obj.metadata.name }).catch(() => {});
}

export async function locks(b: Bench, rounds: number): Promise<Record<string, Figure>> {
  const results = new Results();
  await policyRounds(b, rounds, results);
  await configMapRounds(b, rounds, results);
  return results.figures();
}
