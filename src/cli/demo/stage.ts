/**
 * What both of the demo's stories stand on (story.ts, the transaction directories; sources-story.ts,
 * the shop as a Kustomize overlay): the cluster with Janus and the shop's namespace installed, the
 * main job started as the controller's own identity, the web view, and the clean-up of an
 * existing cluster. Every resource is registered with the Cleanup as soon as it exists.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PatchType } from '../../kube/client.ts';
import { isNotFound } from '../../kube/errors.ts';
import type { Objects } from '../../kube/resources.ts';
import { transactionsPath } from '../../kube/transactions.ts';
import { DEFAULT_RESULTS_BRANCH } from '../../results/index.ts';
import { connect } from '../cluster.ts';
import { UsageError } from '../command.ts';
import { openBrowser, serveUi } from '../ui-session.ts';
import type { Cleanup } from './cleanup.ts';
import {
  adminObjects,
  type DemoCluster,
  existingCluster,
  installExampleShop,
  installJanus,
  REPO_ROOT,
  startLocalCluster,
} from './cluster.ts';
import { type MainJob, startMainJob } from './main-job.ts';
import type { Narrator } from './progress.ts';
import type { DemoRepository } from './repository.ts';

export const NAMESPACE = 'shop';
/** What the shop's changes run as (examples/setup/10-deployer.yaml). */
export const SERVICE_ACCOUNT = 'deployer';

export interface StoryOptions {
  /** An existing cluster's admin kubeconfig instead of a local control plane. */
  kubeconfig: string | undefined;
  /** Limit for each wait on the cluster or the results branch. */
  waitMs: number;
  signal: AbortSignal;
  narrator: Narrator;
  cleanup: Cleanup;
  /** Open the web view (janus ui) as the story starts, so a newcomer watches it there. */
  ui: boolean;
  /** Called once everything has been shown, before cleaning up (--keep waits here). */
  beforeCleanup: (info: { workDir: string; repo: string; adminKubeconfig: string }) => Promise<void>;
}

/**
 * The cluster (local or given), Janus's CRD and RBAC, and the example shop: with its workloads
 * (examples/setup whole) or without them, its namespace and deployer alone, when a Source
 * creates them.
 */
export async function setUpCluster(
  opts: StoryOptions,
  workDir: string,
  shop: { workloads: boolean; what: string; details: readonly string[] },
): Promise<{ cluster: DemoCluster; admin: Objects }> {
  const { narrator, cleanup } = opts;
  const cluster = opts.kubeconfig
    ? existingCluster(opts.kubeconfig, workDir)
    : await startLocalCluster(narrator, cleanup);
  const admin = await adminObjects(cluster.adminKubeconfig);
  cleanup.add('Closing the connection to the API server', () => admin.client.connection.close());
  narrator.step(`Installing Janus (CRD, namespace janus-system, controller RBAC) and ${shop.what}.`);
  if (opts.kubeconfig) await refuseExistingShop(admin);
  await installJanus(cluster, workDir);
  await installExampleShop(cluster, { workloads: shop.workloads });
  if (opts.kubeconfig) cleanup.add(`Deleting namespace ${NAMESPACE}`, () => deleteShop(admin, opts.waitMs));
  for (const line of shop.details) narrator.detail(line);
  return { cluster, admin };
}

/**
 * `janus run` over the demo's repository, as the controller's own ServiceAccount, with the
 * repository's policy (the shop's namespace and deployer) and `more` flags.
 */
export async function startJob(
  s: { cluster: DemoCluster; repo: DemoRepository; workDir: string; narrator: Narrator; cleanup: Cleanup },
  more: { args: readonly string[]; shown: string; details: readonly string[] },
): Promise<MainJob> {
  const cacheDir = join(s.workDir, 'cache');
  await mkdir(cacheDir);
  const args = [
    ...['--repo', s.repo.path, '--initial', 'apply', '--poll-interval', '1s', '--cache-dir', cacheDir],
    // The repository's policy: the example namespace, and the one ServiceAccount its changes name.
    ...['--default-namespace', NAMESPACE, '--allowed-namespaces', NAMESPACE],
    ...['--allowed-service-accounts', `${NAMESPACE}/${SERVICE_ACCOUNT}`],
    ...more.args,
    // Only the example namespace: on an existing cluster, other Transactions are not the demo's business.
    ...['--namespace', NAMESPACE, '--controller-namespace', 'janus-system', '--no-leader-elect'],
    ...['--kubeconfig', s.cluster.controllerKubeconfig],
    ...['--metrics-bind-address', '127.0.0.1:0', '--log-level', 'info'],
  ];
  const logFile = join(s.workDir, 'janus-run.log');
  s.narrator.step(
    "Starting the main job, as the controller's own ServiceAccount (only the RBAC in manifests/rbac):",
  );
  s.narrator.detail(
    `janus run --repo ${s.repo.path} --initial apply --poll-interval 1s ${more.shown}…   (log: ${logFile})`,
  );
  for (const line of more.details) s.narrator.detail(line);
  const job = startMainJob({ args, logFile, cwd: REPO_ROOT });
  s.cleanup.add(`Stopping janus run (pid ${job.pid})`, () => job.stop());
  return job;
}

/** `janus ui` on the shop, as the demo's admin, opened in the browser where there is one. */
export async function openUi(
  cluster: DemoCluster,
  repo: DemoRepository,
  narrator: Narrator,
  cleanup: Cleanup,
): Promise<void> {
  const connection = await connect(
    { kubeconfig: cluster.adminKubeconfig, context: undefined, namespace: NAMESPACE },
    'demo',
  );
  cleanup.add('Closing the web view’s connection', () => connection.close());
  const { server } = await serveUi(connection, {
    scope: NAMESPACE,
    port: 0,
    context: undefined,
    'controller-namespace': 'janus-system',
    repo: repo.path,
    'results-branch': DEFAULT_RESULTS_BRANCH,
    'git-token-file': undefined,
    'git-username': undefined,
    'allow-insecure-http': false,
    'cache-dir': undefined,
    allowed: undefined,
    sopsKinds: [],
  });
  cleanup.add('Stopping the web view', () => server.close());
  narrator.detail(`Watch it in the web view (janus ui): ${server.url}`);
  openBrowser(server.url);
}

/** Runs `steps`; if the main job died meanwhile, says so with the end of its log. */
export async function explainFailure(job: MainJob, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (e) {
    if (job.running()) throw e;
    throw new UsageError(`janus run stopped unexpectedly. The end of its log:\n${await job.tail()}`, 1);
  }
}

/** Waits until the results branch has a commit whose subject starts with each of `wanted`. */
export async function waitForResults(
  repo: DemoRepository,
  wanted: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    const subjects = await repo.subjects(DEFAULT_RESULTS_BRANCH);
    if (wanted.every((w) => subjects.some((s) => s.startsWith(w)))) return;
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function refuseExistingShop(admin: Objects): Promise<void> {
  if (await admin.find({ apiVersion: 'v1', kind: 'Namespace', name: NAMESPACE })) {
    throw new UsageError(
      `namespace ${NAMESPACE} already exists in this cluster: the demo creates and deletes it. Delete it first, or run the demo without --kubeconfig`,
    );
  }
}

/** Deletes the example namespace; Transactions still in flight lose their finalizer first (their controller is gone). */
async function deleteShop(admin: Objects, waitMs: number): Promise<void> {
  const { items } = await admin.client.request<{
    items: { metadata: { name: string; finalizers?: string[] } }[];
  }>({
    method: 'GET',
    path: transactionsPath(NAMESPACE),
  });
  for (const txn of items.filter((t) => (t.metadata.finalizers ?? []).length > 0)) {
    await admin.client.request({
      method: 'PATCH',
      path: transactionsPath(NAMESPACE, txn.metadata.name),
      contentType: PatchType.merge,
      body: { metadata: { finalizers: null } },
    });
  }
  try {
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: NAMESPACE });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const deadline = Date.now() + waitMs;
  while (
    Date.now() < deadline &&
    (await admin.find({ apiVersion: 'v1', kind: 'Namespace', name: NAMESPACE }))
  ) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
