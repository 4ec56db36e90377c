/**
 * Replays result records as commits on top of a tip of the results branch, without a worktree.
 * Because each record carries whole files, replaying onto a tip someone else moved needs no merge:
 * their files stay, ours are rewritten. Records the caller found already on the branch (by their
 * Janus-Result trailer, see landed.ts) are skipped; so are records without an id (queued by an
 * older version) whose files the tip already holds.
 */

import { type CommitSigner, ObjectBatch } from '../git/object-batch.ts';
import type { ObjectStore, Signature } from '../git/object-store.ts';
import type { PackObject } from '../git/pack-writer.ts';
import { writeFiles } from '../git/tree-writer.ts';
import { TRAILER_RESULT, withTrailer } from './commit-message.ts';
import type { ResultRecord } from './result-record.ts';

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
  }
  await batch.flush();
  return { tip, objects: batch.objects() };
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
