/**
 * A real Git smart-HTTP server for tests: `git http-backend` (the CGI that ships with git) behind a
 * small node:http server on 127.0.0.1. Bodies are streamed both ways, every request is recorded
 * (so tests can assert what a poll cost), and the server can play an outage.
 *
 * Also: helpers that drive the native git CLI from a scratch work tree, to play "a user merges a
 * pull request" or "someone else pushed".
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface BasicCredentials {
  username: string;
  password: string;
}

export interface GitServerOptions {
  /** When set, every request needs these credentials (HTTP basic auth). */
  auth?: BasicCredentials;
  /** Answer in protocol version 0 whatever the client asks for, as a server older than git 2.18. */
  protocolV0Only?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** Repository name, as given to createRepo. */
  repo: string;
  /** Path inside the repository, e.g. "info/refs" or "git-upload-pack". */
  path: string;
  query: string;
  /** The Git-Protocol header: "version=2" for protocol v2 (ls-refs, fetch), empty for v1. */
  gitProtocol: string;
  status: number;
  /** Bytes of response body sent to the client (after the CGI header block). */
  bytesSent: number;
  bytesReceived: number;
}

/**
 * A push taken out of the normal path (holdNextPush): its request read whole, then held. Its
 * client never gets an answer: the connection is reset once the push is landed or dropped.
 */
export interface HeldPush {
  /** Resolves once the push has arrived, its body read to the end. */
  readonly arrived: Promise<void>;
  /** Runs git-receive-pack on it now (the branch moves, if it still can); resolves when done. */
  land(): Promise<void>;
  /** Throws it away: git never sees it. */
  drop(): void;
}

/** How an outage looks to clients: HTTP 503, or connections reset before any response. */
export type OutageMode = 'unavailable' | 'reset';

export interface GitServer {
  readonly baseUrl: string;
  url(repo: string): string;
  /** Creates a bare repository that accepts anonymous pushes; returns its path. */
  createRepo(repo: string, defaultBranch?: string): Promise<string>;
  repoPath(repo: string): string;
  setDown(down: boolean, mode?: OutageMode): void;
  /**
   * The next `count` pushes are carried out (git-receive-pack runs to the end and updates the
   * refs) but their response is lost: an HTTP 500, or the connection reset.
   */
  loseResponses(count: number, mode: 'error' | 'reset'): void;
  /**
   * Holds the next push to `repo` (its git-receive-pack POST) until the test lands or drops it:
   * a push in flight when its sender dies, landing late (a slow host) or never.
   */
  holdNextPush(repo: string): HeldPush;
  /**
   * Runs `hook` before serving each request until it returns true (e.g. to push a competing commit
   * between a client's ref discovery and its push).
   */
  beforeRequest(hook: (request: RecordedRequest) => Promise<boolean> | boolean): void;
  requests(repo?: string): RecordedRequest[];
  clearRequests(): void;
  stop(): Promise<void>;
}

/** Environment for every native git call: no user or system config leaks into tests. */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Test User',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test User',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
};

/** Runs native git in `cwd` and returns its trimmed stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.trim();
}

/** `git` for tests that build repositories synchronously (unit tests of pack and object reading). */
export function gitSync(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }).trim();
}

/** A new local repository on branch main with one commit holding a README: a repository janus run can watch. */
export async function localRepository(prefix: string, readme: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await git(dir, 'init', '--quiet', '--initial-branch=main');
  await writeFile(join(dir, 'README.md'), readme);
  await git(dir, 'add', '.');
  await git(dir, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '-m', 'Start');
  return dir;
}

export async function startGitServer(options: GitServerOptions = {}): Promise<GitServer> {
  const root = await mkdtemp(join(tmpdir(), 'janus-git-server-'));
  const children = new Set<ChildProcess>();
  const sockets = new Set<Socket>();
  const records: RecordedRequest[] = [];
  let outage: OutageMode | undefined;
  let lost = { count: 0, mode: 'error' as 'error' | 'reset' };
  let hook: ((request: RecordedRequest) => Promise<boolean> | boolean) | undefined;
  let hold: { repo: string; take(req: IncomingMessage, entry: RecordedRequest): void } | undefined;

  const server = createServer(async (req, res) => {
    if (options.protocolV0Only) delete req.headers['git-protocol'];
    if (outage === 'reset') {
      req.socket.destroy();
      return;
    }
    const entry = describeRequest(req);
    try {
      if (hook && (await hook(entry))) hook = undefined;
    } catch (error) {
      res.writeHead(500).end(`beforeRequest hook failed: ${error}\n`);
      return;
    }
    res.on('close', () => {
      entry.status = res.statusCode;
      records.push(entry);
    });
    if (outage === 'unavailable') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('down for a test\n');
      return;
    }
    if (options.auth && !isAuthorized(req, options.auth)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="janus-test"' }).end('authentication required\n');
      return;
    }
    if (hold?.repo === entry.repo && entry.method === 'POST' && entry.path === 'git-receive-pack') {
      hold.take(req, entry);
      hold = undefined;
      return;
    }
    if (lost.count > 0 && entry.method === 'POST' && entry.path === 'git-receive-pack') {
      lost.count--;
      const child = spawnHttpBackend(root, req, entry);
      children.add(child);
      child.stdout?.resume(); // the push happens; its report goes nowhere
      child.on('close', () => {
        children.delete(child);
        if (lost.mode === 'reset') req.socket.destroy();
        else res.writeHead(500, { 'content-type': 'text/plain' }).end('response lost for a test\n');
      });
      return;
    }
    const child = runHttpBackend(root, req, res, entry);
    children.add(child);
    child.on('close', () => children.delete(child));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const repoPath = (repo: string) => join(root, `${repo}.git`);

  return {
    baseUrl,
    url: (repo) => `${baseUrl}/${repo}.git`,
    repoPath,
    async createRepo(repo, defaultBranch = 'main') {
      const path = repoPath(repo);
      await mkdir(dirname(path), { recursive: true });
      await git(root, 'init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, path);
      await git(path, 'config', 'http.receivepack', 'true');
      return path;
    },
    loseResponses(count, mode) {
      lost = { count, mode };
    },
    holdNextPush(repo) {
      let arrive: () => void = () => {};
      const arrived = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      let request: { req: IncomingMessage; entry: RecordedRequest; body: Buffer } | undefined;
      hold = {
        repo,
        take(req, entry) {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            request = { req, entry, body: Buffer.concat(chunks) };
            arrive();
          });
        },
      };
      const arrivedFirst = (): NonNullable<typeof request> => {
        if (!request) throw new Error('the held push has not arrived yet');
        return request;
      };
      return {
        arrived,
        async land() {
          const { req, entry, body } = arrivedFirst();
          const child = spawnHttpBackend(root, req, entry, body);
          children.add(child);
          child.stdout?.resume(); // its report goes nowhere
          await new Promise((resolve) => child.on('close', resolve));
          children.delete(child);
          req.socket.destroy();
        },
        drop() {
          arrivedFirst().req.socket.destroy();
        },
      };
    },
    setDown(down, mode = 'unavailable') {
      outage = down ? mode : undefined;
      // Keep-alive sockets would otherwise let clients bypass a 'reset' outage.
      if (down) for (const socket of sockets) socket.destroy();
    },
    beforeRequest(h) {
      hook = h;
    },
    requests: (repo) => records.filter((r) => repo === undefined || r.repo === repo),
    clearRequests: () => {
      records.length = 0;
    },
    async stop() {
      for (const child of children) child.kill('SIGKILL');
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

function isAuthorized(req: IncomingMessage, auth: BasicCredentials): boolean {
  const header = req.headers.authorization ?? '';
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return header === expected;
}

function describeRequest(req: IncomingMessage): RecordedRequest {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const match = /^\/(.+?)\.git\/(.*)$/.exec(decodeURIComponent(url.pathname));
  return {
    method: req.method ?? 'GET',
    repo: match?.[1] ?? '',
    path: match?.[2] ?? url.pathname,
    query: url.search.replace(/^\?/, ''),
    gitProtocol: String(req.headers['git-protocol'] ?? ''),
    status: 0,
    bytesSent: 0,
    bytesReceived: 0,
  };
}

/** Serves one request through `git http-backend`, streaming the body in and the response out. */
function runHttpBackend(
  root: string,
  req: IncomingMessage,
  res: ServerResponse,
  entry: RecordedRequest,
): ChildProcess {
  const child = spawnHttpBackend(root, req, entry);
  res.on('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL'); // the client went away mid-response
  });
  child.on('error', () => {
    if (!res.headersSent) res.writeHead(500).end('cannot run git http-backend\n');
  });
  streamCgiResponse(child, res, entry);
  return child;
}

/** Starts `git http-backend` for one request, with the request body (or `body`, read already) on its stdin. */
function spawnHttpBackend(
  root: string,
  req: IncomingMessage,
  entry: RecordedRequest,
  body?: Buffer,
): ChildProcess {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const child = spawn('git', ['http-backend'], {
    env: {
      ...process.env,
      ...GIT_ENV,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: url.pathname,
      QUERY_STRING: entry.query,
      REQUEST_METHOD: entry.method,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] !== undefined && { CONTENT_LENGTH: req.headers['content-length'] }),
      ...(req.headers['content-encoding'] !== undefined && {
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'],
      }),
      ...(req.headers['git-protocol'] !== undefined && { GIT_PROTOCOL: String(req.headers['git-protocol']) }),
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      REMOTE_USER: 'test',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.stdin!.on('error', () => {}); // the CGI may exit before reading everything; the status says why
  if (body) {
    entry.bytesReceived += body.length;
    child.stdin!.end(body);
    return child;
  }
  req.on('data', (chunk: Buffer) => {
    entry.bytesReceived += chunk.length;
  });
  req.pipe(child.stdin!);
  return child;
}

/** Parses the CGI header block ("Status:", headers, blank line), then pipes the body with backpressure. */
function streamCgiResponse(child: ChildProcess, res: ServerResponse, entry: RecordedRequest): void {
  const stdout = child.stdout!;
  let head = Buffer.alloc(0);
  const onHead = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = headerEnd(head);
    if (end === undefined) return;
    stdout.off('data', onHead);
    stdout.pause();
    const { status, headers } = parseCgiHeaders(head.subarray(0, end.start).toString('latin1'));
    const rest = head.subarray(end.bodyStart);
    res.writeHead(status, headers);
    entry.bytesSent += rest.length;
    if (rest.length > 0) res.write(rest);
    stdout.on('data', (c: Buffer) => {
      entry.bytesSent += c.length;
    });
    stdout.pipe(res);
  };
  stdout.on('data', onHead);
  child.on('close', () => {
    if (!res.headersSent) res.writeHead(502).end('git http-backend exited without a response\n');
  });
}

function headerEnd(buf: Buffer): { start: number; bodyStart: number } | undefined {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { start: crlf, bodyStart: crlf + 4 };
  if (lf >= 0) return { start: lf, bodyStart: lf + 2 };
  return undefined;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}

/**
 * A scratch clone with a work tree, driven by native git: to play users and other writers.
 * `remote` may be a bare repository path (fast, not recorded by the server) or an HTTP URL.
 */
export class ScratchWorkTree {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async clone(remote: string): Promise<ScratchWorkTree> {
    const dir = await mkdtemp(join(tmpdir(), 'janus-worktree-'));
    await git(dir, 'clone', '--quiet', remote, '.');
    return new ScratchWorkTree(dir);
  }

  git(...args: string[]): Promise<string> {
    return git(this.dir, ...args);
  }

  /** Writes (string) or deletes (null) files, relative to the work tree root. */
  async write(files: Record<string, string | null>): Promise<void> {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.dir, path);
      if (content === null) {
        await rm(full, { recursive: true, force: true });
      } else {
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
      }
    }
  }

  /** Stages everything and commits; returns the new commit's sha. */
  async commit(message: string): Promise<string> {
    await this.git('add', '--all');
    await this.git('commit', '--quiet', '--allow-empty', '-m', message);
    return this.git('rev-parse', 'HEAD');
  }

  /** Checks out `branch`, creating it from the current HEAD (or as an orphan) when asked. */
  async checkout(branch: string, create: 'new' | 'orphan' | false = false): Promise<void> {
    if (create === 'orphan') {
      await this.git('checkout', '--quiet', '--orphan', branch);
      await this.git('rm', '-r', '--quiet', '--force', '--ignore-unmatch', '.');
    } else if (create === 'new') await this.git('checkout', '--quiet', '-b', branch);
    else await this.git('checkout', '--quiet', branch);
  }

  /** Merges `branch` into the current branch with a merge commit, like a pull-request merge button. */
  async mergeNoFastForward(branch: string, message: string): Promise<string> {
    await this.git('merge', '--quiet', '--no-ff', '-m', message, branch);
    return this.git('rev-parse', 'HEAD');
  }

  async push(branch: string, opts: { force?: boolean } = {}): Promise<void> {
    await this.git(
      'push',
      '--quiet',
      ...(opts.force ? ['--force'] : []),
      'origin',
      `HEAD:refs/heads/${branch}`,
    );
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** One-shot: clone `remote`, apply `files` on `branch`, commit and push; returns the commit sha. */
export async function pushCommit(
  remote: string,
  branch: string,
  files: Record<string, string | null>,
  message = 'test commit',
): Promise<string> {
  const tree = await ScratchWorkTree.clone(remote);
  try {
    const exists = (await tree.git('ls-remote', '--heads', 'origin', branch)) !== '';
    if (exists) await tree.checkout(`origin/${branch}`);
    else await tree.checkout(branch, 'orphan');
    await tree.write(files);
    const sha = await tree.commit(message);
    await tree.push(branch);
    return sha;
  } finally {
    await tree.dispose();
  }
}
