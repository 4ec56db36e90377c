/** Inputs every result carries besides the transaction itself: who wrote it, and where it came from. */
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  type Transaction,
  type TransactionSource,
} from '../api/v1alpha1/index.ts';

export interface ResultContext {
  /** e.g. "0.1.0". */
  controllerVersion: string;
  /** The writer's identity, e.g. the pod name or the leader-election identity. */
  identity: string;
  /** Overrides what the transaction records about its source. */
  source?: TransactionSource;
}

export const RESULT_API_VERSION = 'tx.janus.io/v1alpha1';
export const RESULT_KIND = 'TransactionResult';
export const RESULTS_DIRECTORY = 'results';

/** The source of a transaction: context override, else its status, else the annotations set at materialization. */
export function sourceOf(txn: Transaction, context: ResultContext): TransactionSource {
  const annotations = txn.metadata.annotations ?? {};
  const fromAnnotations: TransactionSource = {
    ...(annotations[ANNOTATION_SOURCE_REPOSITORY] !== undefined && {
      repository: annotations[ANNOTATION_SOURCE_REPOSITORY],
    }),
    ...(annotations[ANNOTATION_SOURCE_REVISION] !== undefined && {
      revision: annotations[ANNOTATION_SOURCE_REVISION],
    }),
    ...(annotations[ANNOTATION_SOURCE_PATH] !== undefined && { path: annotations[ANNOTATION_SOURCE_PATH] }),
  };
  return { ...fromAnnotations, ...txn.status?.source, ...context.source };
}

/** The commit sha of a revision written as "<branch>@sha1:<hex>" (or a bare sha). */
export function sourceCommit(revision: string | undefined): string | undefined {
  const match = /(?:^|@sha1:)([0-9a-f]{40})$/.exec(revision ?? '');
  return match?.[1];
}

/** "results/<namespace>/<name>.yaml", with path segments made safe whatever the input. */
export function resultPath(namespace: string, name: string): string {
  return `${RESULTS_DIRECTORY}/${safeSegment(namespace)}/${safeSegment(name)}.yaml`;
}

/** Valid Kubernetes names pass unchanged; anything else cannot escape its directory. */
function safeSegment(segment: string): string {
  const safe = segment.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' || /^\.+$/.test(safe) || safe.toLowerCase().startsWith('.git') ? `_${safe}` : safe;
}

/** The source block of a result file; a URL never carries credentials there. */
export function renderSource(source: TransactionSource): TransactionSource {
  return {
    ...(source.repository && {
      repository: source.repository.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1'),
    }),
    ...(source.revision && { revision: source.revision }),
    ...(source.path && { path: source.path }),
  };
}
