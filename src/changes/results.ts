/** What a commit or an undo of one change came to. */
import type { KubeObject } from '../kube/resources.ts';
import { contentFingerprint } from './undo-rules.ts';

export type Committed = {
  kind: 'committed';
  resourceVersion: string;
  /** contentFingerprint of what the change left; empty for a Delete. */
  fingerprint: string;
  /** Found in place (our own earlier write) rather than written now. */
  recognized: boolean;
};

export type CommitResult =
  | Committed
  | { kind: 'conflict'; message: string }
  | { kind: 'failed'; message: string };

export type UndoResult =
  | { kind: 'undone' }
  | { kind: 'conflict'; message: string }
  | { kind: 'failed'; message: string };

export function committed(obj: KubeObject, recognized: boolean): Committed {
  return {
    kind: 'committed',
    resourceVersion: obj.metadata.resourceVersion ?? '',
    fingerprint: contentFingerprint(obj),
    recognized,
  };
}

/** A Delete committed: nothing is left to fingerprint. */
export const gone = (recognized: boolean): Committed => ({
  kind: 'committed',
  resourceVersion: '',
  fingerprint: '',
  recognized,
});
