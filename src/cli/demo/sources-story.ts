/**
 * `janus demo --sources`: the shop as a Kustomize overlay kept by a Source (docs/sources.md).
 * Commit 1 applies release 1; commit 2 changes the image and the generated ConfigMap's data, a
 * new hash name, all or nothing: the new ConfigMap created, the Deployment updated, the old
 * ConfigMap pruned; commit 3's pods never become ready, and Janus rolls the whole commit back:
 * the Deployment as commit 2 left it, the pruned ConfigMap re-created, release 2 serving
 * throughout. Then the Source as `kubectl get jsrc` shows it, and the results branch.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Source, Transaction } from '../../api/v1alpha1/index.ts';
import type { KubeObject, Objects } from '../../kube/resources.ts';
import { DEFAULT_RESULTS_BRANCH, resultPath } from '../../results/index.ts';
import { EXAMPLES } from './cluster.ts';
import { describeOverlayShop } from './observe.ts';
import { PhaseFollower } from './phases.ts';
import type { Narrator } from './progress.ts';
import { obtainRenderTools, renderToolFlags } from './render-tools.ts';
import { DemoRepository } from './repository.ts';
import { describeRollout } from './rollout.ts';
import { changeLines, sourceTable, transactionOfCommit } from './source-view.ts';
import {
  explainFailure,
  NAMESPACE,
  openUi,
  type StoryOptions,
  setUpCluster,
  startJob,
  waitForResults,
} from './stage.ts';

/** The Source of examples/sources/sources/shop.yaml. */
const SOURCE = 'shop';
const OVERLAY = 'overlays/demo/kustomization.yaml';

export const sourcesStepCount = (local: boolean) => (local ? 9 : 7);

interface Chapter {
  repo: DemoRepository;
  phases: PhaseFollower;
  admin: Objects;
  narrator: Narrator;
  waiting: () => AbortSignal;
}

export async function tellSourcesStory(opts: StoryOptions): Promise<void> {
  const { narrator, cleanup, signal } = opts;
  const workDir = await mkdtemp(join(tmpdir(), 'janus-demo-'));
  cleanup.add(`Removing ${workDir}`, () => rm(workDir, { recursive: true, force: true }));
  const tools = obtainRenderTools(narrator);
  signal.throwIfAborted();
  const { cluster, admin } = await setUpCluster(opts, workDir, {
    workloads: false,
    what: "the shop's namespace (examples/setup without its workloads: the Source creates them)",
    details: [
      'Namespace shop, and the ServiceAccount deployer, whose Role is everything the Source may change there.',
    ],
  });
  signal.throwIfAborted();
  const repo = await createRepository(narrator, workDir);
  const job = await startJob(
    { cluster, repo, workDir, narrator, cleanup },
    {
      args: renderToolFlags(tools),
      shown: `${renderToolFlags(tools).join(' ')} `,
      details: [
        'It reads sources/shop.yaml on main: a Source, shop, kept from overlays/demo. It renders the overlay',
        'with kustomize in a sandbox (no network, nothing outside the checkout) and applies the commit as one',
        'transaction, shop-<7 hex of the commit>: release 1.',
      ],
    },
  );
  if (opts.ui) await openUi(cluster, repo, narrator, cleanup);
  const waiting = () => AbortSignal.any([signal, job.exitSignal, AbortSignal.timeout(opts.waitMs)]);
  const phases = new PhaseFollower(admin, NAMESPACE, narrator, AbortSignal.any([signal, job.exitSignal]));
  const chapter: Chapter = { repo, phases, admin, narrator, waiting };
  try {
    await explainFailure(job, async () => {
      const first = await firstCommit(chapter, (await repo.git('rev-parse', 'HEAD')).trim());
      const second = await newSettings(chapter);
      const third = await unhealthyRelease(chapter);
      await whereToLook(chapter, [first, second, third]);
    });
  } finally {
    phases.stop();
  }
  await opts.beforeCleanup({ workDir, repo: repo.path, adminKubeconfig: cluster.adminKubeconfig });
}

async function createRepository(narrator: Narrator, workDir: string): Promise<DemoRepository> {
  narrator.step('Creating a Git repository holding the shop as a Kustomize overlay (examples/sources).');
  const repo = await DemoRepository.seed(
    join(workDir, 'repo'),
    { from: join(EXAMPLES, 'sources'), into: '.' },
    'The shop as a Kustomize overlay: release 1',
  );
  narrator.detail(`${repo.path}, branch main:`);
  narrator.detail(
    '  base/              Deployment web, Service web, and a configMapGenerator: ConfigMap web-config-<hash>,',
  );
  narrator.detail(
    '                     the hash of its data in its name, which kustomize writes into the Deployment',
  );
  narrator.detail('  overlays/demo/     the demo environment: namespace shop, the image tag, its settings');
  narrator.detail(
    '  sources/shop.yaml  the Source: path overlays/demo, kustomize, ServiceAccount deployer, prune: true,',
  );
  narrator.detail("                     and the shop's health gate (wait for the Deployment, at most 2m)");
  return repo;
}

/** Waits for `commit`'s transaction to reach one of `phases`; returns it. */
async function untilPhase(c: Chapter, commit: string, phases: readonly string[]): Promise<Transaction> {
  let found: Transaction | undefined;
  await c.phases.until((txns) => {
    found = transactionOfCommit(txns, commit);
    return phases.includes(found?.status?.phase ?? '');
  }, c.waiting());
  if (!found) throw new Error(`no transaction of commit ${commit.slice(0, 7)}`);
  return found;
}

async function showOutcome(c: Chapter, txn: Transaction, heading: string): Promise<void> {
  c.narrator.detail('');
  c.narrator.detail(`${txn.metadata.name}, one transaction:`);
  for (const line of changeLines(txn)) c.narrator.detail(`  ${line}`);
  c.narrator.detail(heading);
  for (const line of await describeOverlayShop(c.admin)) c.narrator.detail(`  ${line}`);
}

/** Each step returns its commit's transaction: its name, and the phase it ended in. */
interface Outcome {
  name: string;
  phase: string;
}

const outcomeOf = (txn: Transaction): Outcome => ({
  name: txn.metadata.name,
  phase: txn.status?.phase ?? 'Pending',
});

async function firstCommit(c: Chapter, commit: string): Promise<Outcome> {
  const txn = await untilPhase(c, commit, ['Committed', 'RolledBack', 'Failed']);
  await showOutcome(c, txn, 'The shop now:');
  return outcomeOf(txn);
}

/** Commit 2: a new image and new settings; the generated ConfigMap's name changes with them. */
async function newSettings(c: Chapter): Promise<Outcome> {
  // Read before the commit: janus run polls every second, and may have pruned it by the time it is shown.
  const before = await generatedConfigMaps(c.admin);
  const commit = await commitRelease(c, {
    step: 'Release 2 (a new commit): a new image and new settings, so the generated ConfigMap gets a new name.',
    folder: 'sources-release-2',
    subject: 'Release 2 of the web front end: new image, new settings',
  });
  const txn = await untilPhase(c, commit, ['Committed', 'RolledBack', 'Failed']);
  await showOutcome(c, txn, 'The shop now:');
  const after = await generatedConfigMaps(c.admin);
  c.narrator.detail('');
  c.narrator.detail(
    `All or nothing: ${after.join(', ')} created and the Deployment pointed at it, ${before.join(', ')}`,
  );
  c.narrator.detail(
    'pruned (prune: true; the Source applied it and the render no longer has it). Had any step failed,',
  );
  c.narrator.detail('every one would have been undone.');
  return outcomeOf(txn);
}

/**
 * Commit 3: pods that never become ready, and new settings again. The health gate fails, and
 * the whole commit is rolled back: release 2's pods serve throughout.
 */
async function unhealthyRelease(c: Chapter): Promise<Outcome> {
  const serving = await generatedConfigMaps(c.admin);
  const uids = await uidsOf(c.admin, serving);
  const commit = await commitRelease(c, {
    step: 'Release 3 (a new commit): new settings again, and an image whose pods never become ready.',
    folder: 'sources-release-3',
    subject: 'Release 3 of the web front end: new image, new settings',
  });
  c.narrator.detail(
    '  + overlays/demo/never-ready.patch.yaml: a readiness probe the new image fails, a 10s progress deadline',
  );
  await untilPhase(c, commit, ['Verifying', 'RolledBack', 'Failed']);
  c.narrator.detail(
    `  while Janus waits for it to be healthy: ${await describeRollout(c.admin, c.waiting())}`,
  );
  const txn = await untilPhase(c, commit, ['RolledBack', 'Failed']);
  await showOutcome(c, txn, 'The shop now:');
  const recreated = (await uidsOf(c.admin, serving)).filter((uid, i) => uid && uid !== uids[i]);
  c.narrator.detail('');
  c.narrator.detail(
    'Every write was accepted, so the commit was applied; but the Deployment never became healthy,',
  );
  c.narrator.detail(
    "so Janus rolled the whole commit back: the Deployment as release 2 left it, release 3's ConfigMap",
  );
  c.narrator.detail(
    `deleted, and ${serving.join(', ')}, which it had pruned, ${recreated.length === serving.length ? 're-created (a new uid)' : 'back'}: the pods of`,
  );
  c.narrator.detail(
    'release 2 read it, and served throughout. The Source stays at release 2 until a commit changes',
  );
  c.narrator.detail('the render (the same render is not tried again).');
  return outcomeOf(txn);
}

/** A new step: examples/<folder> committed over the repository, its hash and the overlay's lines it changed. */
async function commitRelease(
  c: Chapter,
  release: { step: string; folder: string; subject: string },
): Promise<string> {
  c.narrator.step(release.step);
  const commit = await c.repo.commitTree(join(EXAMPLES, release.folder), release.subject);
  c.narrator.detail(`git commit ${commit.slice(0, 7)}, ${OVERLAY}:`);
  for (const line of await c.repo.lastChange(OVERLAY)) c.narrator.detail(`  ${line}`);
  return commit;
}

async function whereToLook(c: Chapter, outcomes: readonly Outcome[]): Promise<void> {
  c.narrator.step(
    `Where people look: the Source, and the results branch (git log ${DEFAULT_RESULTS_BRANCH}).`,
  );
  await waitForResults(
    c.repo,
    outcomes.map((o) => `${NAMESPACE}/${o.name}: ${o.phase}`),
    c.waiting(),
  );
  const source = await c.admin.get<Source>({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Source',
    namespace: NAMESPACE,
    name: SOURCE,
  });
  c.narrator.say('');
  c.narrator.say(`$ kubectl get jsrc -n ${NAMESPACE}`);
  c.narrator.say(sourceTable([source], Date.now()).trimEnd());
  const ready = source.status?.conditions?.find((cond) => cond.type === 'Ready');
  if (ready?.message) c.narrator.say(`(-o wide adds its Ready condition's message: ${ready.message})`);
  c.narrator.say(`\n$ git log --format='%h %s' ${DEFAULT_RESULTS_BRANCH}`);
  c.narrator.say((await c.repo.git('log', '--format=%h %s', DEFAULT_RESULTS_BRANCH, '--')).trimEnd());
  const file = resultPath(NAMESPACE, outcomes[outcomes.length - 1]?.name ?? '');
  c.narrator.say(`\n$ git show ${DEFAULT_RESULTS_BRANCH}:${file}`);
  c.narrator.say((await c.repo.show(DEFAULT_RESULTS_BRANCH, file)).trimEnd());
}

/** The names of the generated ConfigMaps in the shop, sorted. */
async function generatedConfigMaps(admin: Objects): Promise<string[]> {
  const list = await admin.list('v1', 'ConfigMap', NAMESPACE);
  return list.items
    .map((cm) => cm.metadata.name)
    .filter((name) => name.startsWith('web-config-'))
    .sort();
}

async function uidsOf(admin: Objects, configMaps: readonly string[]): Promise<(string | undefined)[]> {
  return Promise.all(
    configMaps.map(
      async (name) =>
        (await admin.find<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, name }))
          ?.metadata.uid,
    ),
  );
}
