/**
 * The demo, step by step: a cluster, Janus installed, the example shop, a Git repository seeded
 * from examples/, the main job over it, a ROLLBACK pushed as a second commit, and the results
 * branch as the audit trail. Every resource is registered with the Cleanup as soon as it exists.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transaction } from '../../api/v1alpha1/index.ts';
import type { Objects } from '../../kube/resources.ts';
import { DEFAULT_RESULTS_BRANCH, resultPath } from '../../results/index.ts';
import { type DemoCluster, EXAMPLES } from './cluster.ts';
import { describeShop } from './observe.ts';
import { PhaseFollower, phaseIs } from './phases.ts';
import type { Narrator } from './progress.ts';
import { editDeployment } from './refused-edit.ts';
import { DemoRepository } from './repository.ts';
import { describeRollout } from './rollout.ts';
import { EXAMPLE_SMOKE_URL, type SmokeTest, startSmokeTest } from './smoke-test.ts';
import {
  explainFailure,
  NAMESPACE,
  openUi,
  type StoryOptions,
  setUpCluster,
  startJob,
  waitForResults,
} from './stage.ts';

export const stepCount = (local: boolean) => (local ? 9 : 7);

export async function tellStory(opts: StoryOptions): Promise<void> {
  const { narrator, cleanup, signal } = opts;
  const workDir = await mkdtemp(join(tmpdir(), 'janus-demo-'));
  cleanup.add(`Removing ${workDir}`, () => rm(workDir, { recursive: true, force: true }));
  const { cluster, admin } = await setUpCluster(opts, workDir, {
    workloads: true,
    what: 'the example shop (examples/setup)',
    details: [
      'Namespace shop: Deployment web (release 1), ConfigMaps app-config and storefront, Secret web-credentials,',
      'and the ServiceAccount deployer, whose Role is everything a transaction there may change.',
    ],
  });
  signal.throwIfAborted();
  const repo = await createRepository(narrator, workDir);
  const smoke = await startSmokeTest(admin);
  cleanup.add('Stopping the smoke test', () => smoke.close());
  const job = await startJob(
    { cluster, repo, workDir, narrator, cleanup },
    {
      // What metric analysis may reach: the smoke test alone (none by default).
      args: ['--analysis-allowed-addresses', smoke.origin],
      shown: '',
      details: ['It finds both directories on main and no results branch yet: --initial apply applies them.'],
    },
  );
  if (opts.ui) await openUi(cluster, repo, narrator, cleanup);
  const waiting = () => AbortSignal.any([signal, job.exitSignal, AbortSignal.timeout(opts.waitMs)]);
  const phases = new PhaseFollower(admin, NAMESPACE, narrator, AbortSignal.any([signal, job.exitSignal]));
  try {
    await explainFailure(job, async () => {
      await firstMerge(phases, admin, narrator, waiting);
      await unhealthyRelease(repo, phases, admin, narrator, waiting);
      await brokenCheckout({ repo, smoke, phases, admin, cluster, narrator, waiting });
      await rollbackRequest(repo, phases, admin, narrator, waiting);
      await showResults(repo, narrator, waiting());
    });
  } finally {
    phases.stop();
  }
  await opts.beforeCleanup({ workDir, repo: repo.path, adminKubeconfig: cluster.adminKubeconfig });
}

async function createRepository(narrator: Narrator, workDir: string): Promise<DemoRepository> {
  narrator.step('Creating a Git repository with two transaction directories (examples/transactions).');
  const repo = await DemoRepository.create(join(workDir, 'repo'), EXAMPLES);
  narrator.detail(`${repo.path}, branch main:`);
  narrator.detail(
    '  transactions/deploy-v2/        release 2: patch app-config, patch the web image, update its Secret',
  );
  narrator.detail(
    '  transactions/expose-checkout/  two NodePort Services on the same port: the second fails at commit',
  );
  return repo;
}

/** Both directories are applied: one commits, one fails at commit and is rolled back. */
async function firstMerge(
  phases: PhaseFollower,
  admin: Objects,
  narrator: Narrator,
  waiting: () => AbortSignal,
) {
  await phases.until(
    (t) => phaseIs(t, 'deploy-v2', 'Committed') && phaseIs(t, 'expose-checkout', 'RolledBack'),
    waiting(),
  );
  narrator.detail('');
  narrator.detail(
    'deploy-v2 committed all three changes. expose-checkout committed two, the third was refused,',
  );
  await showShop(admin, narrator, 'and Janus undid the two in reverse order. The shop now:');
}

/**
 * Release 3 never becomes ready: the health gate rolls it back by itself, and release 2's pods
 * serve throughout.
 */
async function unhealthyRelease(
  repo: DemoRepository,
  phases: PhaseFollower,
  admin: Objects,
  narrator: Narrator,
  waiting: () => AbortSignal,
) {
  narrator.step(
    'Release 3 goes out (a new commit): its pods never become ready (a readiness probe the new image fails).',
  );
  narrator.detail(`git commit -m "${await repo.commitRelease3(EXAMPLES)}"`);
  const ended = (t: readonly Transaction[]) =>
    phaseIs(t, 'deploy-v3', 'RolledBack') || phaseIs(t, 'deploy-v3', 'Failed');
  await phases.until((t) => phaseIs(t, 'deploy-v3', 'Verifying') || ended(t), waiting());
  narrator.detail(`  while Janus waits for it to be healthy: ${await describeRollout(admin, waiting())}`);
  await phases.until(ended, waiting());
  narrator.detail('');
  narrator.detail('Every write was accepted, so the change was committed; but the Deployment never became');
  narrator.detail('healthy (its rollout stopped making progress), so Janus rolled release 3 back by itself,');
  narrator.detail('checked that release 2 is healthy again, and recorded why. Release 2 served throughout.');
  await showShop(admin, narrator, 'The shop now:');
}

/**
 * Release 4 becomes ready, but its checkout fails: the smoke test in the bake window catches what
 * readiness cannot, and Janus rolls it back.
 */
async function brokenCheckout({
  repo,
  smoke,
  phases,
  admin,
  cluster,
  narrator,
  waiting,
}: {
  repo: DemoRepository;
  smoke: SmokeTest;
  phases: PhaseFollower;
  admin: Objects;
  cluster: DemoCluster;
  narrator: Narrator;
  waiting: () => AbortSignal;
}) {
  // The checkout's failures show once the demo has shown a person's edit refused in the window.
  smoke.holdFailures();
  narrator.step(
    'Release 4 switches the new checkout on (a new commit): its pods become ready, but the checkout fails.',
  );
  narrator.detail(`git commit -m "${await repo.commitRelease4(EXAMPLES, EXAMPLE_SMOKE_URL, smoke.url)}"`);
  narrator.detail(
    '  health: stableFor 1m, and a smoke test of the checkout every 2s inside that window (examples/release-4)',
  );
  narrator.detail(
    `  (the demo plays the smoke-test service on ${smoke.url}, the one address janus run may query: --analysis-allowed-addresses ${smoke.origin})`,
  );
  const ended = (t: readonly Transaction[]) =>
    phaseIs(t, 'deploy-v4', 'RolledBack') || phaseIs(t, 'deploy-v4', 'Failed');
  const baking = (t: readonly Transaction[]) =>
    t.some((x) => x.metadata.name === 'deploy-v4' && x.status?.health?.stableSince !== undefined);
  await phases.until((t) => baking(t) || ended(t), waiting());
  await lockedEdit(cluster, admin, narrator);
  smoke.failing();
  await phases.until(ended, waiting());
  narrator.detail('');
  narrator.detail(
    'The rollout was healthy (every pod ready), so a gate on readiness alone would have committed',
  );
  narrator.detail('it. In the bake window the smoke test failed, so Janus rolled release 4 back by itself.');
  await showShop(admin, narrator, 'The shop now:');
}

/** In release 4's bake window, a person edits the Deployment by hand: the API server refuses. */
async function lockedEdit(cluster: DemoCluster, admin: Objects, narrator: Narrator): Promise<void> {
  narrator.detail(
    '  while release 4 bakes, someone edits the Deployment by hand (the editor sets replicas: 5):',
  );
  const attempt = await editDeployment({
    kubectl: cluster.kubectl,
    kubeconfig: cluster.adminKubeconfig,
    admin,
    namespace: NAMESPACE,
    name: 'web',
  });
  narrator.detail(`  $ ${attempt.command}`);
  narrator.detail(`  ${attempt.answer}`);
  narrator.detail(
    attempt.refused
      ? '  Refused, even to the cluster admin: namespace shop opted in to locks that block (label\n' +
          '  tx.janus.io/locks=Deny), so while deploy-v4 holds the Deployment nobody else writes it, and\n' +
          '  what the bake window measures is release 4 alone.'
      : '  Accepted: this cluster does not enforce the locks (no janus-locks admission policy).',
  );
}

/** A second commit adds a ROLLBACK file: the committed release is undone. */
async function rollbackRequest(
  repo: DemoRepository,
  phases: PhaseFollower,
  admin: Objects,
  narrator: Narrator,
  waiting: () => AbortSignal,
) {
  narrator.step(
    'Release 2 misbehaves: a developer adds a ROLLBACK file to transactions/deploy-v2 (a second commit).',
  );
  narrator.detail(`git commit -m "${await repo.commitFollowUp(EXAMPLES)}"`);
  await phases.until((t) => phaseIs(t, 'deploy-v2', 'RolledBack'), waiting());
  narrator.detail('');
  await showShop(admin, narrator, 'The shop is back where it started:');
}

async function showShop(admin: Objects, narrator: Narrator, heading: string): Promise<void> {
  narrator.detail(heading);
  for (const line of await describeShop(admin)) narrator.detail(`  ${line}`);
}

async function showResults(repo: DemoRepository, narrator: Narrator, signal: AbortSignal) {
  narrator.step(`The results branch is the audit trail: git log ${DEFAULT_RESULTS_BRANCH}`);
  await waitForResults(
    repo,
    ['deploy-v2', 'deploy-v3', 'deploy-v4', 'expose-checkout'].map(
      (name) => `${NAMESPACE}/${name}: RolledBack`,
    ),
    signal,
  );
  narrator.say('');
  narrator.say((await repo.git('log', '--format=%h %s', DEFAULT_RESULTS_BRANCH, '--')).trimEnd());
  narrator.say('\nEach commit says what happened and links the source commit, e.g. the newest one:');
  narrator.say((await repo.git('log', '-1', '--format=%B', DEFAULT_RESULTS_BRANCH, '--')).trimEnd());
  const file = resultPath(NAMESPACE, 'deploy-v2');
  narrator.say(`\n$ git show ${DEFAULT_RESULTS_BRANCH}:${file}`);
  narrator.say((await repo.show(DEFAULT_RESULTS_BRANCH, file)).trimEnd());
}
