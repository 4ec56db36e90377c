/**
 * One repository, as Janus sees it: a transport (HTTP into a cache gitdir, or a local repository
 * in place) plus a queue that runs every operation on it one at a time. isomorphic-git does not
 * support concurrent operations on one gitdir (isomorphic-git#1278), and the poller and the
 * results writer share the gitdir.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpClient } from 'isomorphic-git';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { CredentialsProvider } from './auth.ts';
import { createHttpClient } from './http-client.ts';
import { HttpTransport } from './http-transport.ts';
import { GIT_INPUT_LIMITS } from './input-limits.ts';
import { LocalTransport } from './local-transport.ts';
import { describeLocation, parseRepositoryLocation, type RepositoryLocation } from './location.ts';
import { ObjectStore } from './object-store.ts';
import type { PackObject } from './pack-writer.ts';
import type { Transport } from './transport.ts';

export interface RepositoryOptions {
  /** An https:// URL, a local path, or an already parsed location. */
  location: string | RepositoryLocation;
  /** Janus's cache directory; each repository gets its own subdirectory (its cache gitdir, pending results). */
  cacheDir: string;
  /** For HTTP remotes that need authentication. */
  credentials?: CredentialsProvider;
  http?: HttpClient;
  /**
   * Every fetch adds a packfile and isomorphic-git cannot repack; past this many the cache gitdir
   * is dropped and rebuilt by a shallow fetch (history is deepened again only where needed).
   */
  maxPacks?: number;
  /**
   * What one fetch from an HTTP remote may download, in bytes (default DEFAULT_MAX_FETCH_BYTES);
   * past it the fetch fails with a GitAccessError of kind 'too-large'. 0: unlimited.
   */
  maxFetchBytes?: number;
  /** The largest tree object read (default GIT_INPUT_LIMITS.maxTreeBytes). */
  maxTreeBytes?: number;
  logger?: Logger;
}

/** What an operation can do while it holds the repository. */
export interface GitSession {
  readonly store: ObjectStore;
  /** Brings `branch` up to date; returns its tip, or undefined when it does not exist. */
  fetch(branch: string): Promise<string | undefined>;
  /** Fetches `commits` more ancestors of `branch`; false when there is no more history to get. */
  deepen(branch: string, commits: number): Promise<boolean>;
  /**
   * Moves the remote `branch` from `expected` to `oid` (never forced), sending `objects`: every
   * object reachable from `oid` and not from `expected`.
   */
  push(
    branch: string,
    oid: string,
    expected: string | undefined,
    objects: readonly PackObject[],
  ): Promise<void>;
}

const DEFAULT_MAX_PACKS = 50;

/**
 * 64 MiB. isomorphic-git holds a downloaded pack in memory several times over while it indexes it
 * (measured: ~5× the pack's size in peak RSS), so this keeps a fetch well inside the 512 MiB the
 * shipped Deployment allows. A Git-ops repository's tip is usually a few MiB.
 */
export const DEFAULT_MAX_FETCH_BYTES = 64 * 1024 * 1024;

export class GitRepository {
  readonly location: RepositoryLocation;
  /** URL or path, never with credentials: for logs, messages and results. */
  readonly display: string;
  /** This repository's own directory under the cache directory. */
  readonly stateDir: string;
  readonly #gitdir: string;
  readonly #transport: Transport;
  readonly #queue = new PQueue({ concurrency: 1 });
  readonly #maxPacks: number;
  readonly #maxTreeBytes: number;
  readonly #logger: Logger | undefined;

  private constructor(
    location: RepositoryLocation,
    stateDir: string,
    gitdir: string,
    transport: Transport,
    options: RepositoryOptions,
  ) {
    this.location = location;
    this.display = describeLocation(location);
    this.stateDir = stateDir;
    this.#gitdir = gitdir;
    this.#transport = transport;
    this.#maxPacks = options.maxPacks ?? DEFAULT_MAX_PACKS;
    this.#maxTreeBytes = options.maxTreeBytes ?? GIT_INPUT_LIMITS.maxTreeBytes;
    this.#logger = options.logger;
  }

  static async open(options: RepositoryOptions): Promise<GitRepository> {
    const location =
      typeof options.location === 'string' ? parseRepositoryLocation(options.location) : options.location;
    const display = describeLocation(location);
    const stateDir = join(options.cacheDir, cacheKey(display));
    await mkdir(stateDir, { recursive: true });
    if (location.kind === 'local') {
      const gitdir = await LocalTransport.findGitdir(location.path);
      return new GitRepository(location, stateDir, gitdir, new LocalTransport(location.path), options);
    }
    const gitdir = join(stateDir, 'cache.git');
    await HttpTransport.prepare(gitdir, location.url);
    const maxFetchBytes = options.maxFetchBytes ?? DEFAULT_MAX_FETCH_BYTES;
    const transport = new HttpTransport(
      location.url,
      options.http ?? createHttpClient(),
      options.credentials,
      maxFetchBytes > 0 ? maxFetchBytes : undefined,
    );
    return new GitRepository(location, stateDir, gitdir, transport, options);
  }

  /**
   * Runs `fn` with exclusive use of the repository, after every operation queued before it. All
   * reads in one run share one object cache, dropped when it ends. Transport failures reject with
   * a GitAccessError.
   */
  run<T>(fn: (session: GitSession) => Promise<T>): Promise<T> {
    return this.#queue.add(async () => {
      await this.#compactIfNeeded();
      const store = new ObjectStore(this.#gitdir, this.#maxTreeBytes);
      try {
        return await fn(this.#session(store));
      } finally {
        await store.close();
      }
    });
  }

  /** Fetches `branch` and returns its tip (undefined when the branch does not exist). */
  fetchBranch(branch: string): Promise<string | undefined> {
    return this.run((session) => session.fetch(branch));
  }

  /** Waits for queued operations to finish. */
  async idle(): Promise<void> {
    await this.#queue.onIdle();
  }

  #session(store: ObjectStore): GitSession {
    const transport = this.#transport;
    return {
      store,
      fetch: (branch) => transport.fetch(store, branch),
      deepen: (branch, commits) => transport.deepen(store, branch, commits),
      push: (branch, oid, expected, objects) => transport.push(store, branch, oid, expected, objects),
    };
  }

  async #compactIfNeeded(): Promise<void> {
    if (this.location.kind !== 'http') return; // never touch a user's repository
    const packs = (await readdir(join(this.#gitdir, 'objects', 'pack')).catch(() => [])).filter((f) =>
      f.endsWith('.pack'),
    );
    if (packs.length <= this.#maxPacks) return;
    this.#logger?.info(
      { repository: this.display, packs: packs.length },
      'rebuilding the Git cache: too many packfiles',
    );
    await rm(this.#gitdir, { recursive: true, force: true });
    await HttpTransport.prepare(this.#gitdir, this.location.url);
  }
}

/** A readable, collision-free directory name for a repository: "github.com-org-repo-1a2b3c4d". */
function cacheKey(display: string): string {
  const slug = display
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/[^A-Za-z0-9.]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(-48);
  const hash = createHash('sha256').update(display).digest('hex').slice(0, 8);
  return `${slug}-${hash}`;
}
