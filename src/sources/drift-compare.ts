/**
 * Whether one live object of a source differs from its last applied render (docs/sources.md,
 * "Drift"), as `flux diff` decides: the render is dry-run applied by the source's field manager
 * (not forced), and the fields that manager owns in the dry run's result are compared with the
 * same fields of the live object. A field another manager set and the source never did is no
 * drift; one the source set that someone changed, removed, or took over is. Pure.
 */

import { appliedEntry, configurationOf } from '../changes/managed-fields.ts';
import { deepEqual } from '../changes/undo-rules.ts';
import type { KubeObject } from '../kube/resources.ts';
import { ANNOTATION_APPLIED_BY } from '../saga/targets.ts';

/** Paths named per drifted object: enough to see what changed, bounded for the log and status. */
export const MAX_DRIFT_PATHS = 8;

/**
 * The object the dry run sends: the rendered one without status, its `tx.janus.io/applied-by`
 * stamp the live object's (the saga's stamp names the transaction that last wrote it; the render
 * has none, and its absence is no drift).
 */
export function dryRunObject(rendered: KubeObject, live: KubeObject): KubeObject {
  const { status: _status, ...rest } = rendered as KubeObject & { status?: unknown };
  const annotations = { ...rendered.metadata.annotations };
  const stamp = live.metadata.annotations?.[ANNOTATION_APPLIED_BY];
  if (stamp !== undefined) annotations[ANNOTATION_APPLIED_BY] = stamp;
  else delete annotations[ANNOTATION_APPLIED_BY];
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = rendered.metadata;
  return {
    ...rest,
    metadata: { ...meta, ...(Object.keys(annotations).length > 0 && { annotations }) },
  } as KubeObject;
}

/**
 * The paths (at most MAX_DRIFT_PATHS, then "…") where `live` differs from `dryRun` in the fields
 * `manager`'s apply owns in `dryRun`; empty when they agree. The source's manager owning nothing
 * in the dry run (an API server that did not record it) is drift of the whole object.
 */
export function driftedPaths(dryRun: KubeObject, live: KubeObject, manager: string): string[] {
  const entry = appliedEntry(dryRun, manager);
  if (!entry?.fieldsV1) return ['(the source owns no field)'];
  const want = withoutVolatile(configurationOf(dryRun, entry.fieldsV1));
  const have = withoutVolatile(configurationOf(live, entry.fieldsV1));
  const paths: string[] = [];
  differences(want, have, '', paths);
  return paths.length > MAX_DRIFT_PATHS ? [...paths.slice(0, MAX_DRIFT_PATHS), '…'] : paths;
}

/** What no render sets and every write moves: never drift. */
function withoutVolatile(obj: KubeObject): unknown {
  const { resourceVersion: _rv, generation: _g, managedFields: _mf, ...meta } = obj.metadata;
  const { [ANNOTATION_APPLIED_BY]: _stamp, ...annotations } = meta.annotations ?? {};
  const { status: _status, ...rest } = obj as KubeObject & { status?: unknown };
  return {
    ...rest,
    metadata: { ...meta, annotations: Object.keys(annotations).length > 0 ? annotations : undefined },
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function differences(want: unknown, have: unknown, at: string, out: string[]): void {
  if (out.length > MAX_DRIFT_PATHS) return;
  if (isRecord(want) && isRecord(have)) {
    for (const key of new Set([...Object.keys(want), ...Object.keys(have)])) {
      if (want[key] === undefined && have[key] === undefined) continue;
      differences(want[key], have[key], at ? `${at}.${key}` : key, out);
    }
    return;
  }
  if (Array.isArray(want) && Array.isArray(have) && want.length === have.length) {
    want.forEach((item, i) => {
      differences(item, have[i], `${at}[${i}]`, out);
    });
    return;
  }
  if (!deepEqual(want, have)) out.push(at || '.');
}
