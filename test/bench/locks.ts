/**
 * What locks that block cost every write (docs/security.md, "Locks that block"): the latency of
 * one write and the kube-apiserver's CPU for it, with no policy installed, then with the policy
 * janus-locks and 0, 100 and 1,000 locks held, all in the LockTable of the written object's own
 * namespace (the worst case: a write reads one table, its own namespace's). Writes to an
 * unlocked ConfigMap, as the administrator, and to a locked one, as its holder (its
 * ServiceAccount with the Transaction's uid, as the controller writes it; a holder's write is the
 * one that goes through the whole expression). Each configuration gets WRITES writes one after
 * another after a warm-up, and the configurations take turns, round after round.
 *
 * Beside them, the design this replaced: the same policy with a ConfigMap as its parameter
 * (one per namespace, a key per lock). The API server converts a typed parameter to
 * unstructured for every evaluation, so that cost grows with the locks in the namespace; a
 * custom resource's parameter is unstructured already and is not copied.
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
/** Writes before measuring: the table's writes leave the API server collecting garbage a while. */
const WARM_UP = 200;
/** Locks per field manager: ten targets per Transaction. */
const PER_TRANSACTION = 10;
const HOLDER = 'deployer';

type Config = { name: string; policy: 'none' | 'janus-locks' | 'configmap'; locks: number };
const CONFIGS: Config[] = [
  { name: 'no policy', policy: 'none', locks: 0 },
  { name: 'janus-locks, 0 locks', policy: 'janus-locks', locks: 0 },
  { name: 'janus-locks, 100 locks', policy: 'janus-locks', locks: 100 },
  { name: 'janus-locks, 1,000 locks', policy: 'janus-locks', locks: 1000 },
];
/**
 * Measured after the others, their policy installed once: a ConfigMap parameter's informer in the
 * API server freezes for good once no binding names its kind (kubernetes#130887), so its binding
 * is never removed between two of these.
 */
const CONFIGMAP_CONFIGS: Config[] = [
  { name: 'a ConfigMap as parameter (replaced), 0 locks', policy: 'configmap', locks: 0 },
  { name: 'a ConfigMap as parameter (replaced), 1,000 locks', policy: 'configmap', locks: 1000 },
];

interface Sample {
  p50: number;
  p99: number;
  /** kube-apiserver CPU per write, ms. */
  cpuMs: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** WRITES merge patches of one ConfigMap, one after another. */
async function writes(client: KubeClient, path: string, apiserver: number): Promise<Sample> {
  const patch = (i: number) =>
    client.request({ method: 'PATCH', path, body: { data: { v: String(i) } }, contentType: PatchType.merge });
  await sleep(2_000);
  for (let i = 0; i < WARM_UP; i++) await patch(i);
  const cpuBefore = await cpuSeconds(apiserver);
  const latencies: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const started = performance.now();
    await patch(i);
    latencies.push(performance.now() - started);
  }
  const cpuMs = ((await cpuSeconds(apiserver)) - cpuBefore) * 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuMs: cpuMs / WRITES };
}

/** The ConfigMap variant of the policy: the same rule, its parameter a ConfigMap janus-locks-cm. */
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
  for (const v of spec.validations)
    v.messageExpression = "'locked by ' + params.data[variables.resource + '.' + request.name]";
  const bindingSpec = structuredClone(binding.spec) as { policyName: string; paramRef: { name: string } };
  bindingSpec.policyName = 'janus-locks-cm';
  bindingSpec.paramRef.name = 'janus-locks-cm';
  return [
    { ...policy, metadata: { name: 'janus-locks-cm' }, spec },
    { ...binding, metadata: { name: 'janus-locks-cm-deny' }, spec: bindingSpec },
  ] as KubeObject[];
}

export async function locks(b: Bench, rounds: number): Promise<Record<string, Figure>> {
  const [, apiserverPid] = b.env.pids;
  const apiserver = apiserverPid ?? 0;
  const ns = await testNamespace(b.admin, 'bench-locks', {
    deployer: [ALL_ON_CONFIGMAPS],
    labels: { 'tx.janus.io/locks': 'Deny' },
  });
  for (const name of ['unlocked', 'locked-0', 'probe']) await b.admin.create(configMap(ns, name, { v: '0' }));
  const shipped = await readManifests(`${REPO_ROOT}/manifests/policy/locks.yaml`);
  const policy = shipped.find((o) => o.kind === 'ValidatingAdmissionPolicy') as KubeObject;
  const denyBinding = shipped.find((o) => o.metadata.name === 'janus-locks-deny') as KubeObject;
  const variant = configMapVariant(policy, denyBinding);
  const user = `system:serviceaccount:${ns}:${HOLDER}`;
  const admin = b.admin.client;
  const holder = admin.as(user, { [TRANSACTION_UID_EXTRA]: 'bench-0' });
  const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

  const setPolicy = async (which: Config['policy']) => {
    const wanted = which === 'janus-locks' ? shipped : which === 'configmap' ? variant : [];
    for (const obj of [...shipped, ...variant]) {
      if (wanted.includes(obj)) await b.admin.apply(obj, { fieldManager: 'bench', force: true });
      else await b.admin.delete({ ...obj, name: obj.metadata.name }).catch(() => {});
    }
  };
  /** The locks in the table (and the ConfigMap variant's), plus the probe while `probe`. */
  const setLocks = async (count: number, probe: boolean) => {
    const tableRef = {
      apiVersion: LOCK_TABLE_API_VERSION,
      kind: LOCK_TABLE_KIND,
      name: LOCK_TABLE_NAME,
      namespace: ns,
    };
    await b.admin.delete(tableRef).catch(() => {});
    const data: Record<string, string> = {};
    const keys = [...Array.from({ length: count }, (_, i) => `locked-${i}`), ...(probe ? ['probe'] : [])];
    for (let t = 0; t * PER_TRANSACTION < keys.length; t++) {
      const entry: LockEntry = {
        transaction: `t${t}`,
        namespace: ns,
        uid: `bench-${t}`,
        user,
        phase: 'Verifying',
      };
      const mine = keys.slice(t * PER_TRANSACTION, (t + 1) * PER_TRANSACTION);
      for (const k of mine) data[`configmaps.${k}`] = user;
      await b.admin.apply(
        {
          apiVersion: LOCK_TABLE_API_VERSION,
          kind: LOCK_TABLE_KIND,
          metadata: { name: LOCK_TABLE_NAME, namespace: ns },
          spec: { locks: Object.fromEntries(mine.map((k) => [`configmaps/${k}`, entry])) },
        } as KubeObject,
        { fieldManager: `janus-lock:bench-${t}`, force: true },
      );
    }
    await b.admin.apply(
      { ...configMap(ns, 'janus-locks-cm', data), metadata: { name: 'janus-locks-cm', namespace: ns } },
      {
        fieldManager: 'bench',
        force: true,
      },
    );
  };
  let lastRefusal = '';
  /** The probe write as the administrator: refused while the API server enforces a lock on it. */
  const probeRefused = async () => {
    try {
      await admin.request({
        method: 'PATCH',
        path: cmPath('probe'),
        body: { data: { p: '1' } },
        contentType: PatchType.merge,
      });
      return false;
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 403) {
        lastRefusal = e.message;
        return true;
      }
      throw e;
    }
  };
  /** Until the API server enforces `config`: its policy and table seen, the probe's lock gone again. */
  const settle = async (config: Config) => {
    const deadline = Date.now() + 60_000;
    const until = async (refused: boolean, what: string) => {
      while ((await probeRefused()) !== refused) {
        if (Date.now() > deadline) throw new Error(`${config.name}: ${what} (${lastRefusal})`);
        await sleep(100);
      }
    };
    await setPolicy(config.policy);
    await setLocks(config.locks, true);
    if (config.policy === 'none') return until(false, 'a policy still refuses the probe');
    await until(true, 'the policy does not refuse the probe');
    await setLocks(config.locks, false);
    await until(false, 'the probe stays locked');
  };

  const results = new Map<string, number[]>();
  const add = (name: string, value: number) => results.set(name, [...(results.get(name) ?? []), value]);
  const measure = async (config: Config, round: number): Promise<Sample> => {
    await settle(config);
    const unlocked = await writes(admin, cmPath('unlocked'), apiserver);
    add(`${config.name}: write to an unlocked object, p50`, unlocked.p50);
    add(`${config.name}: write to an unlocked object, p99`, unlocked.p99);
    add(`${config.name}: write to an unlocked object, kube-apiserver CPU`, unlocked.cpuMs);
    let line = `locks: round ${round + 1}, ${config.name}: unlocked p50 ${unlocked.p50.toFixed(2)} p99 ${unlocked.p99.toFixed(2)} ms, CPU ${unlocked.cpuMs.toFixed(2)} ms`;
    if (config.policy !== 'configmap') {
      const locked = await writes(holder, cmPath('locked-0'), apiserver);
      const what = config.locks > 0 ? 'its holder' : 'the ServiceAccount (nothing locked)';
      add(`${config.name}: write by ${what}, p50`, locked.p50);
      add(`${config.name}: write by ${what}, p99`, locked.p99);
      add(`${config.name}: write by ${what}, kube-apiserver CPU`, locked.cpuMs);
      line += `; by ${what} p50 ${locked.p50.toFixed(2)} p99 ${locked.p99.toFixed(2)} ms, CPU ${locked.cpuMs.toFixed(2)} ms`;
    }
    process.stderr.write(`${line}\n`);
    return unlocked;
  };
  for (let round = 0; round < rounds; round++) {
    const measured = new Map<string, Sample>();
    // Every other round in reverse order, so no configuration always follows the same one.
    const order = round % 2 === 0 ? CONFIGS : [...CONFIGS].reverse();
    for (const config of order) measured.set(config.name, await measure(config, round));
    const most = measured.get('janus-locks, 1,000 locks');
    const none = measured.get('no policy');
    if (most && none) {
      add('1,000 locks minus no policy: p50 of an unlocked write', most.p50 - none.p50);
      add('1,000 locks minus no policy: p99 of an unlocked write', most.p99 - none.p99);
      add('1,000 locks minus no policy: kube-apiserver CPU of an unlocked write', most.cpuMs - none.cpuMs);
    }
  }
  for (let round = 0; round < rounds; round++)
    for (const config of CONFIGMAP_CONFIGS) await measure(config, round);
  await setPolicy('janus-locks');
  await b.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  const figures: Record<string, Figure> = {};
  for (const [name, values] of results)
    figures[name] = figure(values, name.includes('CPU') ? 'ms/write' : 'ms');
  return figures;
}
