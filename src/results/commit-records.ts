/**
 * Replays result records as commits on top of a tip of the results branch, without a worktree.
 * Because each record carries whole files, replaying onto a tip someone else moved needs no merge:
 * their files stay, ours are rewritten. Records already reflected in the tip are skipped, so a
 * replay after a crash (pushed, but not yet removed from the spool) adds nothing.
 */
import type { ObjectStore, Signature } from '../git/object-store.ts';
import { writeFiles } from '../git/tree-writer.ts';
import type { ResultRecord } from './result-record.ts';

/** Returns the new tip (`base` itself when every record was already there). */
export async function commitRecords(
  store: ObjectStore,
  base: string | undefined,
  records: readonly ResultRecord[],
  signature: Signature,
): Promise<string | undefined> {
  let tip = base;
  let tree: string | undefined;
  let lastMessage: string | undefined;
  if (base !== undefined) {
    const commit = await store.readCommit(base);
    tree = commit.tree;
    lastMessage = commit.message;
  }
  for (const record of records) {
    const isNotice = Object.keys(record.files).length === 0;
    // A notice is already there when the tip is that very notice; a file change when no file differs.
    if (isNotice && lastMessage !== undefined && sameMessage(lastMessage, record.message)) continue;
    const newTree = isNotice
      ? (tree ?? (await store.writeTree([])))
      : await writeFiles(store, tree, record.files);
    if (!isNotice && newTree === tree) continue;
    tip = await store.writeCommit({
      tree: newTree,
      parents: tip === undefined ? [] : [tip],
      message: record.message,
      author: signature,
      committer: signature,
    });
    tree = newTree;
    lastMessage = record.message;
  }
  return tip;
}

function sameMessage(a: string, b: string): boolean {
  return a.trim() === b.trim();
}
