/**
 * Where the materializer keeps its place in the watched branch: the last processed commit and
 * the next source-sequence number, and the key that stamps the Transactions it creates. Stored in a ConfigMap in the controller namespace, one per
 * (repository, branch, root), written only by the leader and always conditionally (the
 * resourceVersion it last saw), so two replicas can never both move it.
 *
 * Why a ConfigMap rather than a file on the results branch:
 * - The sequence must be durable *before* a Transaction carrying it is created, or a restarted
 *   run could hand out a smaller number to a later directory and invert the lock order. A
 *   conditional write to the API server is one cheap request; a push is a network round trip
 *   to a Git host that may be down or slow, on the path of every materialization.
 * - The results branch is written by replaying whole files onto whatever tip is current; a
 *   late replay of an old state file (a former leader's spool) would move the cursor backwards.
 *   A resourceVersion-guarded object cannot go backwards.
 * - The cursor is only a shortcut. What was applied is known from the results branch itself
 *   (every materialized directory has a result file from the moment its Transaction is
 *   created), so losing the ConfigMap costs a re-read of the tip, never a second apply.
 */
import { createHash } from 'node:crypto';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';

export interface GitCursor {
  /** Every directory change up to and including this commit has been handled. */
  lastCommit: string | undefined;
  /** The source-sequence of the next materialized directory. */
  nextSequence: number;
  /**
   * The key of the provenance stamps of the Transactions the materializer creates
   * (provenance.ts); saved before the first Transaction carries a stamp made with it.
   */
  stampKey?: string | undefined;
}

/** The watched repository, branch and folder a cursor belongs to. */
export interface WatchedSource {
  /** URL or path, without credentials. */
  repository: string;
  branch: string;
  root: string;
  /** The installation's instance (src/controller/installation.ts); absent for the default one. */
  instance?: string;
}

export interface CursorStore {
  /** The saved cursor, or undefined when none was ever saved. */
  load(): Promise<GitCursor | undefined>;
  /** Saves conditionally: fails with a CursorConflictError if someone else saved since our last load or save. */
  save(cursor: GitCursor): Promise<void>;
}

export class CursorConflictError extends Error {
  override readonly name = 'CursorConflictError';
}

const SHA1 = /^[0-9a-f]{40}$/;
/** 256 bits, base64url (provenance.ts newStampKey). */
const STAMP_KEY = /^[A-Za-z0-9_-]{43}$/;

/**
 * A stable, valid name: `janus-git-state-<hash of repository, branch, root and instance>`. The
 * default installation hashes no instance, so its name is the one it had before instances.
 */
export function cursorConfigMapName(source: WatchedSource): string {
  const instance = source.instance === undefined ? '' : `\n${source.instance}`;
  const hash = createHash('sha256')
    .update(`${source.repository}\n${source.branch}\n${source.root}${instance}`)
    .digest('hex')
    .slice(0, 16);
  return `janus-git-state-${hash}`;
}

export class ConfigMapCursorStore implements CursorStore {
  readonly name: string;
  readonly #objects: Objects;
  readonly #namespace: string;
  readonly #source: WatchedSource;
  #resourceVersion: string | undefined;

  constructor(objects: Objects, namespace: string, source: WatchedSource) {
    this.#objects = objects;
    this.#namespace = namespace;
    this.#source = source;
    this.name = cursorConfigMapName(source);
  }

  async load(): Promise<GitCursor | undefined> {
    const found = await this.#objects.find({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: this.name,
      namespace: this.#namespace,
    });
    this.#resourceVersion = found?.metadata.resourceVersion;
    return found ? this.#parse(found) : undefined;
  }

  async save(cursor: GitCursor): Promise<void> {
    const object = this.#render(cursor);
    try {
      const saved =
        this.#resourceVersion === undefined
          ? await this.#objects.create(object)
          : await this.#objects.replace({
              ...object,
              metadata: { ...object.metadata, resourceVersion: this.#resourceVersion },
            });
      this.#resourceVersion = saved.metadata.resourceVersion;
    } catch (error) {
      if (isConflict(error) || isAlreadyExists(error) || isNotFound(error)) {
        throw new CursorConflictError(
          `ConfigMap ${this.#namespace}/${this.name} changed since it was read (another janus run?); ` +
            'reloading it at the next leadership term',
          { cause: error },
        );
      }
      throw error;
    }
  }

  #parse(object: KubeObject): GitCursor {
    const data = (object.data ?? {}) as Record<string, string>;
    const where = `ConfigMap ${this.#namespace}/${this.name}`;
    const lastCommit = data.lastCommit || undefined;
    if (lastCommit !== undefined && !SHA1.test(lastCommit)) {
      throw new Error(`${where}: data.lastCommit is not a commit id: ${JSON.stringify(lastCommit)}`);
    }
    const nextSequence = Number(data.nextSequence ?? '0');
    if (!Number.isSafeInteger(nextSequence) || nextSequence < 0) {
      throw new Error(
        `${where}: data.nextSequence is not a whole number: ${JSON.stringify(data.nextSequence)}`,
      );
    }
    const stampKey = STAMP_KEY.test(data.stampKey ?? '') ? data.stampKey : undefined;
    return { lastCommit, nextSequence, stampKey };
  }

  #render(cursor: GitCursor): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: this.name,
        namespace: this.#namespace,
        labels: { 'app.kubernetes.io/managed-by': 'janus', 'app.kubernetes.io/component': 'git-state' },
      },
      data: {
        repository: this.#source.repository,
        branch: this.#source.branch,
        root: this.#source.root,
        lastCommit: cursor.lastCommit ?? '',
        nextSequence: String(cursor.nextSequence),
        ...(cursor.stampKey && { stampKey: cursor.stampKey }),
      },
    };
  }
}

/** A cursor kept in memory only: for tests and benchmarks. */
export class MemoryCursorStore implements CursorStore {
  cursor: GitCursor | undefined;

  constructor(initial?: GitCursor) {
    this.cursor = initial;
  }

  async load(): Promise<GitCursor | undefined> {
    return this.cursor && { ...this.cursor };
  }

  async save(cursor: GitCursor): Promise<void> {
    this.cursor = { ...cursor };
  }
}
