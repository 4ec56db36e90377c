/**
 * API requests per change, counted at the HTTP layer: 10-change transactions of each type that
 * commit, one that rolls back, and `kubectl apply --server-side` of the same objects as the floor.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { Change, ChangeType } from '../../src/api/v1alpha1/index.ts';
import { failAtCommit } from '../support/cluster/admission.ts';
import { cmTarget, configMap, getTxn, leasesOf, transaction } from '../support/cluster/saga.ts';
import { type Bench, timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

const N = 10;

function changesOf(type: ChangeType): Change[] {
  return Array.from({ length: N }, (_, i) => ({
    target: cmTarget(`cm-${i}`),
    type,
    ...(type !== 'Delete' && { content: { data: { v: 'new', i: String(i) } } }),
  }));
}

/** Runs one transaction under a fresh controller; returns requests per change, watches excepted. */
async function measure(b: Bench, type: ChangeType | 'Rollback'): Promise<number> {
  const ns = await b.namespace(type.toLowerCase());
  if (type !== 'Create')
    for (let i = 0; i < N; i++) await b.admin.create(configMap(ns, `cm-${i}`, { v: 'old' }));
  let removePolicy: (() => Promise<void>) | undefined;
  const changes = changesOf(type === 'Rollback' ? 'Patch' : type);
  if (type === 'Rollback') {
    removePolicy = await failAtCommit(b.admin, ns, 'refused');
    changes.push({ target: cmTarget('refused'), type: 'Create', content: { data: {} } });
  }
  const controller = await b.controller(ns);
  b.proxy.reset();
  await b.admin.create(transaction(ns, 'measured', changes));
  const final = type === 'Rollback' ? 'RolledBack' : 'Committed';
  await timeUntil(async () => {
    const txn = await getTxn(b.admin, ns, 'measured');
    return (
      txn.status?.phase === final &&
      !txn.metadata.finalizers?.length &&
      (await leasesOf(b.admin, ns)).length === 0
    );
  });
  await new Promise((r) => setTimeout(r, 500)); // let trailing requests (none expected) show up
  const requests = b.proxy.requests.filter((r) => !r.watch).length;
  await controller.stop();
  await removePolicy?.();
  return requests / N;
}

/** `kubectl apply --server-side` of the same 10 ConfigMaps, discovery cache warm. */
async function kubectlFloor(b: Bench): Promise<number> {
  const kubectl = join(b.env.info.binDir ?? '', 'kubectl');
  const ns = await b.namespace('kubectl');
  const dir = await mkdtemp(join(tmpdir(), 'janus-bench-'));
  const manifest = (v: string) =>
    Array.from({ length: N }, (_, i) => stringify(configMap(ns, `cm-${i}`, { v, i: String(i) }))).join(
      '---\n',
    );
  const cache = join(dir, 'cache');
  const apply = async (v: string) => {
    await writeFile(join(dir, 'cms.yaml'), manifest(v));
    await promisify(execFile)(
      kubectl,
      [
        '--kubeconfig',
        b.proxied.admin,
        '--cache-dir',
        cache,
        'apply',
        '--server-side',
        '--validate=false',
        '--field-manager=bench',
        '-f',
        join(dir, 'cms.yaml'),
      ],
      {},
    );
  };
  await apply('old'); // creates them and warms the discovery cache
  b.proxy.reset();
  await apply('new');
  return b.proxy.requests.filter((r) => !r.watch).length / N;
}

export async function apiCost(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const out: Record<string, Figure> = {};
  for (const type of ['Create', 'Update', 'Patch', 'Delete', 'Rollback'] as const) {
    const values: number[] = [];
    for (let r = 0; r < runs; r++) values.push(await measure(b, type));
    out[
      type === 'Rollback'
        ? 'requests per change, rollback path (10 Patch + 1 refused)'
        : `requests per change, 10× ${type}`
    ] = figure(values, 'req/change');
  }
  out['kubectl apply --server-side --validate=false, 10 ConfigMaps, warm discovery cache (floor)'] = figure(
    [await kubectlFloor(b)],
    'req/object',
  );
  return out;
}
