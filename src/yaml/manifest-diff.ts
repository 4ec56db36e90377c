/**
 * Diffs of Kubernetes objects as reviewers read them: YAML with sorted keys, without the
 * metadata the server sets on every write, and with Secret values masked (as `kubectl diff`
 * does), so a plan or a recovery can be pasted into a pull request or a ticket. Pure.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../kube/resources.ts';
import { type DiffLabels, unifiedDiff } from '../text/diff.ts';

/** Fields that change on every write or are not the user's: they would only add noise. */
const SERVER_SET_METADATA = [
  'managedFields',
  'resourceVersion',
  'generation',
  'uid',
  'creationTimestamp',
  'selfLink',
] as const;

/** The object as a reviewer compares it: server-set metadata and status removed. */
export function comparable(obj: KubeObject): KubeObject {
  const { status: _status, ...rest } = structuredClone(obj);
  const metadata = { ...rest.metadata };
  for (const key of SERVER_SET_METADATA) delete metadata[key];
  return { ...rest, metadata };
}

const isSecret = (obj: KubeObject | undefined) => obj?.apiVersion === 'v1' && obj.kind === 'Secret';
const SECRET_FIELDS = ['data', 'stringData'] as const;

/**
 * Replaces Secret values on both sides like `kubectl diff`: `***` where a value is the same on
 * both sides or on one side only, `*** (before)` / `*** (after)` where it changed. Keys stay
 * visible, so added and removed keys still show.
 */
export function maskSecrets(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (!isSecret(before) && !isSecret(after)) return [before, after];
  const b = before && structuredClone(before);
  const a = after && structuredClone(after);
  for (const field of SECRET_FIELDS) maskValues(b?.[field], a?.[field]);
  return [b, a];
}

type Values = Record<string, string>;

function maskValues(before: unknown, after: unknown): void {
  const b = (before ?? {}) as Values;
  const a = (after ?? {}) as Values;
  for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
    const changed = key in b && key in a && b[key] !== a[key];
    if (key in b) b[key] = changed ? '*** (before)' : '***';
    if (key in a) a[key] = changed ? '*** (after)' : '***';
  }
}

/** YAML as kubectl prints it: YAML 1.1 quoting, so a string "on" or "yes" never reads as a boolean. */
export function toYaml(obj: KubeObject): string {
  return stringify(obj, { sortMapEntries: true, lineWidth: 0, version: '1.1' });
}

/**
 * The unified diff from `before` to `after` (either may be absent: the object does not exist),
 * '' when a reviewer would see no difference.
 */
export function diffObjects(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
  labels: DiffLabels,
): string {
  const [b, a] = maskSecrets(before && comparable(before), after && comparable(after));
  return unifiedDiff(b && toYaml(b), a && toYaml(a), labels);
}
