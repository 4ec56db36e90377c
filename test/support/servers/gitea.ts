/**
 * A real Gitea for the tests: built from its pinned Go module by test/kube-testenv/build-gitea.sh,
 * started on a free loopback port with a temporary folder and SQLite, an admin user and an API
 * token made with Gitea's own CLI, and stopped with the test worker however it ends (reap.ts).
 * It serves repositories over HTTP, sends its real push webhooks and keeps real commit statuses;
 * the tests read what it recorded through its API.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { terminate } from '../../../src/cli/demo/control-plane-processes.ts';
import { eventually } from '../eventually.ts';
import { reapOnExit } from '../processes/reap.ts';

const execFileAsync = promisify(execFile);
const BUILD_SCRIPT = fileURLToPath(new URL('../../kube-testenv/build-gitea.sh', import.meta.url));

export const GITEA_ADMIN = 'janus-admin';

let binDir: string | undefined;

/** The folder holding `gitea` and share/: the script builds it once, then answers from its cache. */
export async function giteaBinaries(): Promise<string> {
  binDir ??=
    process.env.JANUS_GITEA_BIN ??
    (await execFileAsync('bash', [BUILD_SCRIPT], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })).stdout
      .trim()
      .split('\n')
      .pop() ??
    '';
  return binDir;
}

export interface GiteaRepo {
  owner: string;
  name: string;
  /** http://127.0.0.1:<port>/<owner>/<name>.git, no credentials. */
  cloneUrl: string;
  /** The same with the admin's token in it, for pushes from the tests. */
  pushUrl: string;
}

export interface CommitStatusEntry {
  state: string;
  context: string;
  description: string;
  target_url: string;
}

export interface TestGitea {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** An API token of the admin user (scope all). */
  readonly token: string;
  readonly startedInMs: number;
  /** Calls the API as the admin; throws on a non-2xx answer. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A new ordinary user (no rights but a signed-in user's) with an API token of its own. */
  createUser(name: string): Promise<GiteaUser>;
  createRepo(name: string): Promise<GiteaRepo>;
  /** Every status ever posted on `sha` (Gitea keeps each one), oldest first. */
  statuses(repo: GiteaRepo, sha: string): Promise<CommitStatusEntry[]>;
  /** A push webhook on `repo` to `url`, signed with `secret` (Gitea's own kind of hook). */
  addPushWebhook(repo: GiteaRepo, url: string, secret: string): Promise<void>;
  stop(): Promise<void>;
}

export interface GiteaUser {
  login: string;
  token: string;
  /** Calls the API as this user; throws on a non-2xx answer. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export async function startGitea(): Promise<TestGitea> {
  const bin = await giteaBinaries();
  const dir = await mkdtemp(join(tmpdir(), 'janus-gitea-'));
  const config = join(dir, 'app.ini');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await mkdir(join(dir, 'log'), { recursive: true });
  await writeFile(config, appIni(dir, join(bin, 'share'), port));
  // Gitea refuses root unless told; the tests run as whoever runs them (root in CI).
  const env = {
    ...process.env,
    GITEA_WORK_DIR: dir,
    GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT: 'true',
    HOME: dir,
  };
  const gitea = (...args: string[]) =>
    execFileAsync(join(bin, 'gitea'), [...args, '--config', config, '--work-path', dir], {
      env,
      encoding: 'utf8',
    });
  const started = performance.now();
  // Creating the user migrates the empty database first; the server then starts on it.
  await gitea('migrate');
  await gitea(
    'admin',
    'user',
    'create',
    '--admin',
    '--username',
    GITEA_ADMIN,
    '--password',
    'janus-test-password',
    '--email',
    'admin@janus.test',
    '--must-change-password=false',
  );
  // --raw prints the token alone on its line; Gitea's warning about root may come before it.
  const printed = (
    await gitea(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      GITEA_ADMIN,
      '--scopes',
      'all',
      '--raw',
    )
  ).stdout;
  const token = /^[0-9a-f]{40}$/m.exec(printed)?.[0];
  if (!token) throw new Error(`gitea generate-access-token printed no token: ${printed}`);
  const log = join(dir, 'gitea.log');
  const child = reapOnExit(
    spawn(join(bin, 'gitea'), ['web', '--config', config, '--work-path', dir], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const out = createWriteStream(log);
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const stop = async () => {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  };
  const apiAs =
    (authorization: string) =>
    async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${url}/api/v1${path}`, {
        method,
        headers: {
          authorization,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`Gitea ${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
      return (text ? JSON.parse(text) : undefined) as T;
    };
  const api = apiAs(`token ${token}`);
  try {
    await eventually(() => serving(child, url), { timeoutMs: 90_000, intervalMs: 100 });
  } catch (e) {
    const text = await readFile(log, 'utf8').catch(() => '');
    await stop();
    throw new Error(
      `Gitea did not start: ${(e as Error).message}\n${text.split('\n').slice(-30).join('\n')}`,
    );
  }
  return {
    url,
    token,
    startedInMs: Math.round(performance.now() - started),
    api,
    async createUser(login) {
      const password = `${login}-test-password`;
      await api('POST', '/admin/users', {
        username: login,
        email: `${login}@janus.test`,
        password,
        must_change_password: false,
      });
      const basic = `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
      const made = await apiAs(basic)<{ sha1: string }>('POST', `/users/${login}/tokens`, {
        name: `${login}-token`,
        scopes: ['write:issue', 'write:repository', 'read:user'],
      });
      return { login, token: made.sha1, api: apiAs(`token ${made.sha1}`) };
    },
    async createRepo(name) {
      await api('POST', '/user/repos', { name, auto_init: false, default_branch: 'main', private: false });
      const cloneUrl = `${url}/${GITEA_ADMIN}/${name}.git`;
      const pushUrl = `http://${GITEA_ADMIN}:${token}@127.0.0.1:${port}/${GITEA_ADMIN}/${name}.git`;
      return { owner: GITEA_ADMIN, name, cloneUrl, pushUrl };
    },
    async statuses(repo, sha) {
      const all = await api<CommitStatusEntry[] & { status?: string }[]>(
        'GET',
        `/repos/${repo.owner}/${repo.name}/statuses/${sha}?sort=oldest&limit=50`,
      );
      // Gitea names a status's state `status` in its JSON.
      return all.map((s) => ({ ...s, state: (s as { status?: string }).status ?? s.state }));
    },
    async addPushWebhook(repo, hookUrl, secret) {
      await api('POST', `/repos/${repo.owner}/${repo.name}/hooks`, {
        type: 'gitea',
        config: { url: hookUrl, content_type: 'json', secret },
        events: ['push'],
        active: true,
      });
    },
    stop,
  };
}

/**
 * The smallest app.ini that serves the API and Git over HTTP: SQLite, no SSH, no mail, no
 * registration, webhooks allowed to loopback (where the tests' Janus listens), quiet logs.
 */
function appIni(dir: string, share: string, port: number): string {
  return `APP_NAME = janus-test
RUN_MODE = prod
WORK_PATH = ${dir}

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${port}
ROOT_URL = http://127.0.0.1:${port}/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = ${share}
APP_DATA_PATH = ${join(dir, 'data')}

[database]
DB_TYPE = sqlite3
PATH = ${join(dir, 'gitea.db')}
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${join(dir, 'repositories')}
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = janus-test-secret-key
PASSWORD_HASH_ALGO = pbkdf2_hi

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false

[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 10

[mailer]
ENABLED = false

[actions]
ENABLED = false

[indexer]
REPO_INDEXER_ENABLED = false

[cron]
ENABLED = false

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = ${join(dir, 'log')}
`;
}

async function serving(child: ChildProcess, url: string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`exited (${child.exitCode ?? child.signalCode})`);
  }
  const res = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2_000) });
  await res.body?.cancel();
  if (res.status !== 200) throw new Error(`/api/v1/version answered ${res.status}`);
}

/** A port the kernel calls free now; Gitea takes it a moment later (a clash fails the start, loudly). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A Gitea for the test file: started before its tests, stopped after them. */
export function useGitea(): () => TestGitea {
  let gitea: TestGitea | undefined;
  beforeAll(async () => {
    gitea = await startGitea();
  }, 1_800_000); // a cold cache builds Gitea first (build-gitea.sh); then it starts in seconds
  afterAll(async () => {
    await gitea?.stop();
  });
  return () => {
    if (!gitea) throw new Error('Gitea is not started yet (call it inside a test)');
    return gitea;
  };
}

/** A new repository `name` with an open pull request from `change` into `main`. */
export async function openPullRequest(
  gitea: TestGitea,
  name: string,
): Promise<{ repository: string; number: number }> {
  const repo = await gitea.createRepo(name);
  const path = `/repos/${repo.owner}/${repo.name}`;
  const file = (text: string, extra = {}) => ({
    content: Buffer.from(text).toString('base64'),
    branch: 'main',
    ...extra,
  });
  await gitea.api('POST', `${path}/contents/README.md`, file('# deploy\n'));
  await gitea.api(
    'POST',
    `${path}/contents/transactions/release/transaction.yaml`,
    file('apiVersion: tx.janus.io/v1alpha1\n', { new_branch: 'change' }),
  );
  const pr = await gitea.api<{ number: number }>('POST', `${path}/pulls`, {
    head: 'change',
    base: 'main',
    title: 'release',
  });
  return { repository: `${repo.owner}/${repo.name}`, number: pr.number };
}
