/**
 * Replays result records as commits on top of a tip of the results branch, without a worktree.
 * Because each record carries whole files, replaying onto a tip someone else moved needs no merge:
 * their files stay, ours are rewritten. Skipped: records the caller found already on the branch
 * (by their Janus-Result trailer, see landed.ts); records whose files the tip already holds; and
 * records of an outcome the tip already records, whoever wrote it (already-recorded.ts): the tip's
 * file at that path is read once per record, so this costs O(records), never the history.
 */

import type { Signature } from '../git/commit-info.ts';
import { type CommitSigner, ObjectBatch } from '../git/object-batch.ts';
import type { ObjectStore } from '../git/object-store.ts';
import type { PackObject } from '../git/pack-writer.ts';
import { writeFiles } from '../git/tree-writer.ts';
import { alreadyRecordedText } from './already-recorded.ts';
import { TRAILER_RESULT, withTrailer } from './commit-message.ts';
import type { ResultRecord } from './result-record.ts';
import { type ResultsSnapshot, resultsSnapshotAt } from './results-reader.ts';

export interface CommittedRecords {
  /** The new tip: `base` itself when every record was already there. */
  tip: string | undefined;
  /**
   * Every object the new commits brought (all of them, whether the store had them or not): with
   * `base`, which the remote has, everything a push of `tip` must send.
   */
  objects: PackObject[];
}

/**
 * Commits `records` on `base`, written into `store`. With `sign`, every commit made is signed:
 * replayed onto a new tip, the commits are new and signed anew.
 */
export async function commitRecords(
  store: ObjectStore,
  base: string | undefined,
  records: readonly ResultRecord[],
  signature: Signature,
  landed: ReadonlySet<string> = new Set(),
  sign?: CommitSigner,
): Promise<CommittedRecords> {
  let tip = base;
  let tree: string | undefined;
  let lastMessage: string | undefined;
  // Hundreds of records after a big poll: written to disk together, once all are committed.
  const batch = new ObjectBatch(store);
  const files = new RecordedFiles(await resultsSnapshotAt(store, base));
  if (base !== undefined) {
    const commit = await store.readCommit(base);
    tree = commit.tree;
    lastMessage = commit.message;
  }
  for (const record of records) {
    if (record.id !== undefined && landed.has(record.id)) continue;
    const isNotice = Object.keys(record.files).length === 0;
    // A notice is already there when the tip is that very notice; a file change when no file differs.
    if (isNotice && lastMessage !== undefined && sameMessage(lastMessage, record.message)) continue;
    if (!isNotice && (await files.recordsAll(record.files))) continue;
    const newTree = isNotice
      ? (tree ?? (await batch.writeTree([])))
      : await writeFiles(batch, tree, record.files);
    if (!isNotice && newTree === tree) continue;
    tip = await batch.writeCommit(
      {
        tree: newTree,
        parents: tip === undefined ? [] : [tip],
        message:
          record.id === undefined ? record.message : withTrailer(record.message, TRAILER_RESULT, record.id),
        author: signature,
        committer: signature,
      },
      sign,
    );
    tree = newTree;
    lastMessage = record.message;
    files.wrote(record.files);
  }
  await batch.flush();
  return { tip, objects: batch.objects() };
}

/**
 * The largest result file read back from the branch to compare outcomes. A Transaction is at
 * most ~1.5 MiB (etcd's limit) and its result file names a subset of it; a larger file at that
 * path (anyone who may push the branch can put one there) is not read, and the record is written.
 */
const MAX_COMPARED_BYTES = 4 * 1024 * 1024;

/** The result files as the commits built so far leave them: the base snapshot, then our own. */
class RecordedFiles {
  readonly #base: ResultsSnapshot;
  readonly #written = new Map<string, string>();

  constructor(base: ResultsSnapshot) {
    this.#base = base;
  }

  /** Whether every file of a record is a result whose outcome is recorded at its path already. */
  async recordsAll(files: Readonly<Record<string, string>>): Promise<boolean> {
    const entries = Object.entries(files);
    for (const [path, text] of entries) {
      const current = this.#written.get(path) ?? (await this.#base.read(path, MAX_COMPARED_BYTES));
      if (current === undefined || !alreadyRecordedText(current, text)) return false;
    }
    return entries.length > 0;
  }

  wrote(files: Readonly<Record<string, string>>): void {
    for (const [path, text] of Object.entries(files)) this.#written.set(path, text);
  }
}

function sameMessage(a: string, b: string): boolean {
  return withoutResultId(a) === withoutResultId(b);
}

const withoutResultId = (message: string) =>
  message
    .split('\n')
    .filter((line) => !line.startsWith(`${TRAILER_RESULT}:`))
    .join('\n')
    .trim();
