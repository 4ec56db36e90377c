/**
 * Results-branch throughput when 100 transactions finish at once: the real ResultsWriter, with
 * the settings `janus run` uses, pushing over smart HTTP to git http-backend. Per run, a fresh
 * repository whose results branch already holds the 100 Pending records the materializer wrote
 * when it created the Transactions; then their 100 Committed results are written at the same
 * moment, and the clock stops when the writer has none left unconfirmed (each push removes what
 * it carried from the spool only once the server accepted it). The branch is then checked: 100
 * Committed result files. Run unsigned and with --results-signing-key-file (an ed25519 key from
 * ssh-keygen) alternately, so both see the same load: the cost of signing every results commit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
  type ItemStatus,
  type Transaction,
} from '../../src/api/v1alpha1/index.ts';
import { GitRepository } from '../../src/git/index.ts';
import { type SigningKeySource, signingKeyFile } from '../../src/git/signing-key-file.ts';
import { renderTransactionResult } from '../../src/results/render-transaction.ts';
import { renderMaterialized } from '../../src/results/reporter.ts';
import type { ResultContext } from '../../src/results/result-context.ts';
import { DEFAULT_RESULTS_BRANCH, ResultsWriter } from '../../src/results/writer.ts';
import { conditionsFor, mergeConditions } from '../../src/saga/status.ts';
import { VERSION } from '../../src/version.ts';
import { cmTarget, transaction } from '../support/cluster/saga.ts';
import { type GitServer, git, pushCommit, startGitServer } from '../support/git/git-server.ts';
import { makeKey } from '../support/git/ssh-signing.ts';
import { timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

const RESULTS = 100;
const CHANGES = 5;
const NAMESPACE = 'shop';
const CONTEXT: ResultContext = {
  controllerVersion: VERSION,
  identity: 'system:serviceaccount:janus-system:janus-controller',
};

/** Transaction `i` as the materializer creates it from commit `commit` of `repository`. */
function materialized(i: number, repository: string, commit: string): Transaction {
  const name = `release-${String(i).padStart(3, '0')}`;
  const txn = transaction(
    NAMESPACE,
    name,
    Array.from({ length: CHANGES }, (_, c) => ({
      target: cmTarget(`app-${i}-${c}`),
      type: 'Patch' as const,
      content: { data: { release: name } },
    })),
    {
      annotations: {
        [ANNOTATION_SOURCE_REPOSITORY]: repository,
        [ANNOTATION_SOURCE_REVISION]: `main@sha1:${commit}`,
        [ANNOTATION_SOURCE_PATH]: `transactions/${name}`,
        [ANNOTATION_SOURCE_SEQUENCE]: String(i),
      },
    },
  );
  txn.metadata.uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return txn;
}

/** The same Transaction once every change committed, with the status the controller writes. */
function committed(txn: Transaction): Transaction {
  const namespace = txn.metadata.namespace ?? NAMESPACE;
  const items: ItemStatus[] = txn.spec.changes.map((change, c) => ({
    target: `v1 ConfigMap ${namespace}/${change.target.name}`,
    type: change.type,
    prepared: true,
    committed: true,
    rolledBack: false,
    resourceVersion: String(1000 + c),
    committedResourceVersion: String(2000 + c),
    lease: `${namespace}/janus-lock-configmap-${change.target.name}`,
  }));
  const now = new Date().toISOString();
  const message = `${CHANGES}/${CHANGES} changes committed: ${txn.spec.changes
    .map((change) => `Patch ConfigMap ${change.target.name}`)
    .join(', ')}`;
  return {
    ...txn,
    status: {
      phase: 'Committed',
      progress: `${CHANGES}/${CHANGES}`,
      items,
      rollbackRef: `janus-rollback-${txn.metadata.name}`,
      startedAt: now,
      completedAt: now,
      conditions: mergeConditions(
        undefined,
        conditionsFor('Committed', { reason: 'Committed', message }),
        now,
        1,
      ),
    },
  };
}

interface Landing {
  ms: number;
  pushes: number;
  commits: number;
}

/** One run: a fresh repository and writer, 100 Pending records pushed, then 100 results timed. */
async function landResults(
  server: GitServer,
  run: number,
  cacheDir: string,
  signingKey?: SigningKeySource,
): Promise<Landing> {
  const name = `results-${run}${signingKey ? '-signed' : ''}`;
  const bare = await server.createRepo(name);
  const source = await pushCommit(bare, 'main', { 'README.md': 'transactions live in transactions/\n' });
  const repository = await GitRepository.open({ location: server.url(name), cacheDir });
  const writer = await ResultsWriter.open({ repository, signingKey });
  try {
    const txns = Array.from({ length: RESULTS }, (_, i) => materialized(i, server.url(name), source));
    for (const txn of txns) await writer.write(renderMaterialized(txn, CONTEXT));
    await writer.flush();
    const before = await git(bare, 'rev-parse', DEFAULT_RESULTS_BRANCH);

    server.clearRequests();
    const started = performance.now();
    await Promise.all(txns.map((txn) => writer.write(renderTransactionResult(committed(txn), CONTEXT))));
    await timeUntil(async () => writer.pending === 0, 120_000, 1);
    const ms = performance.now() - started;

    const landed = await git(
      bare,
      'grep',
      '-l',
      'phase: Committed',
      DEFAULT_RESULTS_BRANCH,
      '--',
      'results/',
    );
    if (landed.split('\n').length !== RESULTS)
      throw new Error(`expected ${RESULTS} Committed results on the branch, found:\n${landed}`);
    const commits = Number(await git(bare, 'rev-list', '--count', `${before}..${DEFAULT_RESULTS_BRANCH}`));
    const pushes = server
      .requests(name)
      .filter((r) => r.method === 'POST' && r.path === 'git-receive-pack').length;
    return { ms, pushes, commits };
  } finally {
    await writer.close();
    await repository.idle();
  }
}

export async function resultsPush(runs: number): Promise<Record<string, Figure>> {
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-results-'));
  const server = await startGitServer();
  try {
    const landings: Landing[] = [];
    const signed: Landing[] = [];
    const key = signingKeyFile(makeKey('ed25519', 'janus-results').path);
    for (let run = 1; run <= runs; run++) {
      landings.push(await landResults(server, run, join(scratch, `${run}`)));
      signed.push(await landResults(server, run, join(scratch, `${run}-signed`), key));
    }
    const what = `${RESULTS} results written at once`;
    const signedWhat = `${what}, signed (ed25519)`;
    return {
      ...figures(what, landings),
      ...figures(signedWhat, signed),
    };
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

function figures(what: string, landings: Landing[]): Record<string, Figure> {
  return {
    [`${what}: time until all are on the remote results branch`]: figure(
      landings.map((l) => l.ms),
      'ms',
    ),
    [`${what}: results per second`]: figure(
      landings.map((l) => RESULTS / (l.ms / 1000)),
      'results/s',
    ),
    [`${what}: pushes`]: figure(
      landings.map((l) => l.pushes),
      'pushes',
    ),
    [`${what}: commits`]: figure(
      landings.map((l) => l.commits),
      'commits',
    ),
  };
}
