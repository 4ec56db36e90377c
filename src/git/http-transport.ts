/**
 * Smart-HTTP transport into a local cache gitdir. A poll first asks for the one branch's tip
 * (protocol v2 ls-refs with a prefix, or the ref advertisement of a server that speaks only
 * version 0 or 1: upload-pack.ts); only when it moved does it fetch, with
 * the previous tip as "have", so the server sends just the new commits. The very first fetch of a
 * branch is shallow (depth 1); history is deepened on demand by whoever needs older commits.
 * A push sends the objects its caller made, from memory (smart-http-push.ts).
 */

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import git, { type HttpClient } from 'isomorphic-git';
import type { CredentialsProvider } from './auth.ts';
import { toGitAccessError } from './errors.ts';
import { acceptedShallow, missingObject } from './fetch-connectivity.ts';
import { limitDuration, limitResponseBytes } from './http-client.ts';
import { GIT_INPUT_LIMITS } from './input-limits.ts';
import type { ObjectStore } from './object-store.ts';
import { indexPack } from './pack-indexer.ts';
import type { PackObject } from './pack-writer.ts';
import { ProtocolError } from './receive-pack-protocol.ts';
import { pushPack } from './smart-http-push.ts';
import type { Transport } from './transport.ts';
import { type FetchRequest, openUploadPack, type UploadPack } from './upload-pack.ts';

const REMOTE = 'origin';
/**
 * How long one fetch (or deepen) may take in all: --max-fetch-bytes (64 MiB by default) at
 * ~110 KiB/s. Each chunk must also come within the client's idle timeout (60 s).
 */
const FETCH_DEADLINE_MS = 10 * 60 * 1000;

export class HttpTransport implements Transport {
  readonly display: string;
  readonly #url: string;
  readonly #http: HttpClient;
  readonly #credentials: CredentialsProvider | undefined;
  readonly #maxFetchBytes: number | undefined;

  /** `maxFetchBytes`: what one fetch (or deepen) may download in all; unlimited when undefined. */
  constructor(
    url: string,
    http: HttpClient,
    credentials: CredentialsProvider | undefined,
    maxFetchBytes?: number,
  ) {
    this.display = url;
    this.#url = url;
    this.#http = http;
    this.#credentials = credentials;
    this.#maxFetchBytes = maxFetchBytes;
  }

  /** The HTTP client for one fetch: a fresh byte budget and deadline each time. */
  #fetchClient(): HttpClient {
    const http = limitDuration(this.#http, FETCH_DEADLINE_MS);
    return this.#maxFetchBytes === undefined ? http : limitResponseBytes(http, this.#maxFetchBytes);
  }

  /** Creates the cache gitdir on first use. */
  static async prepare(gitdir: string, url: string): Promise<void> {
    if (fs.existsSync(`${gitdir}/config`)) return;
    await git.init({ fs, gitdir, bare: true });
    await git.addRemote({ fs, gitdir, remote: REMOTE, url });
  }

  async fetch(store: ObjectStore, branch: string): Promise<string | undefined> {
    return this.#wrap('fetch', branch, async (headers) => {
      const server = await this.#open(branch, headers);
      const remoteTip = await server.tip();
      if (remoteTip === undefined) return undefined;
      const localTip = await this.#localTip(store, branch);
      if (localTip === remoteTip) return remoteTip;
      await fetchInto(store, server, {
        want: remoteTip,
        haves: localTip === undefined ? [] : [localTip],
        shallow: await store.shallowCommits(),
        ...(localTip === undefined && { deepen: { depth: 1 } }),
      });
      await store.writeRef(trackingRef(branch), remoteTip);
      return remoteTip;
    });
  }

  /** The server's upload-pack, in the protocol it speaks, with a fresh byte budget and deadline. */
  #open(branch: string, headers: () => Record<string, string>): Promise<UploadPack> {
    return openUploadPack({ http: this.#fetchClient(), url: this.#url, headers }, `refs/heads/${branch}`);
  }

  /** The tracking ref's tip, when its commit is here. */
  async #localTip(store: ObjectStore, branch: string): Promise<string | undefined> {
    const localTip = await store.resolveRef(trackingRef(branch));
    if (localTip === undefined || (await store.hasObject(localTip))) return localTip;
    // Left by a fetch that failed half-way in an older version: start the branch over.
    await store.deleteRef(trackingRef(branch));
    return undefined;
  }

  async deepen(store: ObjectStore, branch: string, commits: number): Promise<boolean> {
    const before = await store.shallowCommits();
    const tip = await store.resolveRef(trackingRef(branch));
    if (before.size === 0 || tip === undefined) return false;
    return this.#wrap('deepen', branch, async (headers) => {
      await fetchInto(store, await this.#open(branch, headers), {
        want: tip,
        haves: [tip],
        shallow: before,
        deepen: { depth: commits, relative: true },
      });
      const after = await store.shallowCommits();
      return after.size !== before.size || [...after].some((oid) => !before.has(oid));
    });
  }

  async push(
    store: ObjectStore,
    branch: string,
    oid: string,
    expected: string | undefined,
    objects: readonly PackObject[],
  ): Promise<void> {
    await this.#wrap('push', branch, async (headers) => {
      await pushPack({
        http: this.#http,
        url: this.#url,
        headers: headers(),
        branch,
        expected,
        oid,
        objects,
      });
      // The remote is at `oid`, whose objects `store` has: the next fetch has nothing to bring.
      await store.writeRef(trackingRef(branch), oid);
    });
  }

  /** Runs `fn` with the auth headers (a fresh copy for each request), mapping failures to GitAccessError. */
  async #wrap<T>(
    operation: string,
    branch: string,
    fn: (headers: () => Record<string, string>) => Promise<T>,
  ): Promise<T> {
    try {
      const auth = this.#credentials ? (await this.#credentials()).headers() : {};
      return await fn(() => ({ ...auth }));
    } catch (error) {
      throw toGitAccessError(error, { repository: this.#url, ref: branch, operation });
    }
  }
}

function trackingRef(branch: string): string {
  return `refs/remotes/${REMOTE}/${branch}`;
}

/** Names a fetch's pack before it is indexed and renamed (pack-<checksum>.pack). */
const TEMPORARY_PACK = 'tmp-fetch-';
/** A temporary file untouched this long was left by a fetch that was killed. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

/**
 * Removes what fetches killed mid-way left: up to a pack's worth of disk each. Only files an hour
 * old: another process sharing the cache (`janus history` beside `janus run`) may be writing one.
 */
async function removeAbandoned(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.startsWith(TEMPORARY_PACK) && !name.endsWith('.tmp')) continue;
    const path = join(dir, name);
    const modified = (await stat(path).catch(() => undefined))?.mtimeMs;
    if (modified !== undefined && Date.now() - modified > ABANDONED_AFTER_MS) await rm(path, { force: true });
  }
}

/**
 * Fetches into `store`: the pack streamed to a file beside the others, indexed (pack-indexer.ts),
 * both renamed into place, then the shallow commits recorded. Only then does the caller move the
 * tracking ref: a fetch stopped anywhere before leaves the store as it was, but for a pack no
 * ref needs yet (the next fetch brings what it lacks again).
 */
async function fetchInto(store: ObjectStore, server: UploadPack, request: FetchRequest): Promise<void> {
  const dir = join(store.gitdir, 'objects', 'pack');
  await mkdir(dir, { recursive: true });
  await removeAbandoned(dir);
  const file = join(dir, `${TEMPORARY_PACK}${randomUUID()}.pack`);
  try {
    const fetched = await server.fetch(request, file);
    const indexed =
      fetched.packBytes > 0
        ? await indexPack(await readFile(file), {
            maxObjects: GIT_INPUT_LIMITS.maxFetchedObjects,
            maxObjectBytes: GIT_INPUT_LIMITS.maxFetchedObjectBytes,
            maxDeltaBytes: GIT_INPUT_LIMITS.maxFetchedDeltaBytes,
            maxHeldBytes: GIT_INPUT_LIMITS.maxFetchedHeldBytes,
            maxInflatedBytes: GIT_INPUT_LIMITS.maxFetchedInflatedBytes,
          })
        : undefined;
    const objects = indexed ?? { oids: new Set<string>(), links: { named: new Map(), parents: new Map() } };
    const has = (oid: string) => store.hasObject(oid);
    const shallow = await acceptedShallow(fetched, objects, has, async (oid) =>
      (await has(oid)) ? (await store.readCommit(oid)).parents : undefined,
    );
    const shallowAfter = await store.shallowCommits();
    for (const oid of shallow.shallow) shallowAfter.add(oid);
    for (const oid of shallow.unshallow) shallowAfter.delete(oid);
    const missing = await missingObject(request.want, objects, shallowAfter, has);
    if (missing !== undefined)
      throw new ProtocolError(`the server's answer to the fetch lacks ${missing}; nothing of it was kept`);
    if (indexed && indexed.objects > 0) await store.addPack(file, indexed.checksum, indexed.idx);
    await store.updateShallow(shallow.shallow, shallow.unshallow);
  } finally {
    await rm(file, { force: true });
  }
}
