/**
 * The Git side end to end: a real Git server (git http-backend), a repository per test, transaction
 * directories written the way users write them, `janus run` processes, and readers of the results
 * branch as an auditor sees it (native git).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { parse } from 'yaml';
import type { TestClients } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import {
  type GitServer,
  type GitServerOptions,
  git,
  pushCommit,
  startGitServer,
} from '../../support/git/git-server.ts';
import { successfulPolls } from '../../support/git/transaction-repo.ts';
import {
  type JanusRunOptions,
  type JanusRunProcess,
  startJanusRun,
} from '../../support/processes/janus-run.ts';

export {
  configMapYaml,
  type DirectoryOptions,
  directory,
  successfulPolls,
} from '../../support/git/transaction-repo.ts';

export const RESULTS = 'janus/results';

/** One Git server for the test file. */
export function useGitServer(options: GitServerOptions = {}): { readonly server: GitServer } {
  const holder = {} as { server: GitServer };
  beforeAll(async () => {
    holder.server = await startGitServer(options);
  });
  afterAll(async () => {
    await holder.server.stop();
  });
  return holder;
}

let repoCounter = 0;

export interface TestRepo {
  /** The repository's name on the server, as requests record it. */
  readonly name: string;
  readonly url: string;
  /** The bare repository on disk (native git reads it; pushes through it are not recorded). */
  readonly bare: string;
  /** Commits `files` (null deletes) on `branch` (default main) and pushes; returns the sha. */
  push(files: Record<string, string | null>, message?: string, branch?: string): Promise<string>;
  /** Subjects on the results branch, oldest first; [] when it does not exist. */
  subjects(): Promise<string[]>;
  /** `git log` of the results branch, full messages, newest first. */
  log(): Promise<string>;
  /** How many commits on the results branch have exactly this subject. */
  count(subject: string): Promise<number>;
  /** results/<ns>/<name>.yaml parsed, or undefined. */
  result(namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  /** baseline.yaml parsed, or undefined. */
  baseline(): Promise<Record<string, unknown> | undefined>;
}

export async function createTestRepo(
  server: GitServer,
  seed: Record<string, string> = {},
): Promise<TestRepo> {
  const name = `repo-${process.pid}-${++repoCounter}`;
  const bare = await server.createRepo(name);
  await pushCommit(
    bare,
    'main',
    { 'README.md': 'transactions live in transactions/\n', ...seed },
    'initial commit',
  );
  const hasResults = async () => (await git(bare, 'branch', '--list', RESULTS)) !== '';
  const show = async (path: string): Promise<Record<string, unknown> | undefined> => {
    if (!(await hasResults())) return undefined;
    try {
      return parse(await git(bare, 'show', `${RESULTS}:${path}`));
    } catch {
      return undefined;
    }
  };
  const subjects = async () =>
    (await hasResults())
      ? (await git(bare, 'log', '--reverse', '--format=%s', RESULTS)).split('\n').filter(Boolean)
      : [];
  return {
    name,
    url: server.url(name),
    bare,
    push: (files, message = 'change', branch = 'main') => pushCommit(bare, branch, files, message),
    subjects,
    async log() {
      return (await hasResults()) ? git(bare, 'log', RESULTS) : '';
    },
    count: async (subject) => (await subjects()).filter((s) => s === subject).length,
    result: (namespace, txn) => show(`results/${namespace}/${txn}.yaml`),
    baseline: () => show('baseline.yaml'),
  };
}

/**
 * Starts `janus run` processes for a test and stops them after it, printing their logs if it
 * failed. `start` returns after the first successful poll, unless told not to wait.
 */
export function useJanus(clients: TestClients): {
  start(opts: Omit<JanusRunOptions, 'kubeconfig'> & { wait?: boolean }): Promise<JanusRunProcess>;
} {
  const running: JanusRunProcess[] = [];
  afterEach(async (ctx) => {
    const failed = ctx.task.result?.state === 'fail';
    for (const p of running.splice(0)) {
      await p.stop();
      if (failed) console.error(`--- janus run log (${p.logFile}) ---\n${(await p.logs()).slice(-20_000)}`);
    }
  });
  return {
    async start({ wait = true, ...opts }) {
      const p = await startJanusRun({ kubeconfig: clients.kubeconfigs.controller, ...opts });
      running.push(p);
      if (wait)
        await eventually(
          async () => {
            if ((await successfulPolls(p)) < 1) throw new Error('no successful poll yet');
          },
          { timeoutMs: 90_000 },
        );
      return p;
    },
  };
}

/**
 * Flags for replicas of `janus run` that elect a leader on a Lease of their own (named after
 * `prefix`), with timings that hand over in ~3 s when the leader dies.
 */
export function fastLeaderElection(prefix: string): string[] {
  return [
    ...['--leader-elect', '--leader-election-id', `${prefix}-${randomBytes(4).toString('hex')}`],
    ...['--leader-lease-duration', '3s', '--leader-renew-deadline', '2s', '--leader-retry-period', '500ms'],
  ];
}

/** Waits until the process has finished `count` more successful polls than now. */
export async function morePolls(janus: JanusRunProcess, count = 2): Promise<void> {
  const start = await successfulPolls(janus);
  await eventually(async () => {
    const now = await successfulPolls(janus);
    if (now < start + count) throw new Error(`${now - start}/${count} polls so far`);
  });
}

/** Waits until results/<namespace>/<name>.yaml records `phase`; returns the record. */
export async function recordedPhase(
  repo: TestRepo,
  namespace: string,
  name: string,
  phase: string,
): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const result = await repo.result(namespace, name);
      if (result?.phase !== phase)
        throw new Error(`result of ${name} is ${String(result?.phase)}, want ${phase}`);
      return result;
    },
    { timeoutMs: 90_000 },
  );
}
