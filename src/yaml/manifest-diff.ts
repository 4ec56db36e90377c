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
  maskLastApplied(b, a);
  return [b, a];
}

/** `kubectl apply` keeps the whole object it applied, values and all, in this annotation. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The LAST_APPLIED annotation of both sides masked as a value is (the objects are copies). */
function maskLastApplied(before: KubeObject | undefined, after: KubeObject | undefined): void {
  const annotations = [before?.metadata.annotations, after?.metadata.annotations];
  const values = annotations.map((all) =>
    all && LAST_APPLIED in all ? { [LAST_APPLIED]: all[LAST_APPLIED] } : {},
  );
  maskValues(values[0], values[1]);
  annotations.forEach((all, i) => {
    const value = values[i]?.[LAST_APPLIED];
    if (all && value !== undefined) all[LAST_APPLIED] = value;
  });
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

/** What identifies an object: never masked. */
const IDENTITY_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Replaces every value of both sides but their identity (apiVersion, kind, metadata), leaf by
 * leaf, as maskSecrets does a Secret's: for an object of another kind whose content is a secret
 * too (SOPS content of a kind --sops-kinds allows). A Secret is masked as maskSecrets masks it.
 */
export function maskContent(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (isSecret(before) || isSecret(after)) return maskSecrets(before, after);
  const mask = (obj: KubeObject | undefined, other: KubeObject | undefined, side: Side) =>
    obj &&
    (Object.fromEntries(
      Object.entries(structuredClone(obj)).map(([key, value]) => [
        key,
        IDENTITY_FIELDS.has(key) ? value : masked(value, other && (other as Tree)[key], side),
      ]),
    ) as KubeObject);
  const b = mask(before, after, 'before');
  const a = mask(after, before, 'after');
  maskLastApplied(b, a);
  return [b, a];
}

type Side = 'before' | 'after';
type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null;

/** `value` with every leaf masked: `***` where `other` has the same leaf, `*** (before|after)` where not. */
function masked(value: unknown, other: unknown, side: Side): unknown {
  if (isTree(value)) {
    const others = isTree(other) && Array.isArray(other) === Array.isArray(value) ? other : {};
    const entries = Object.entries(value).map(([k, v]) => [k, masked(v, (others as Tree)[k], side)] as const);
    return Array.isArray(value) ? entries.map(([, v]) => v) : Object.fromEntries(entries);
  }
  return other === undefined || other === value ? '***' : `*** (${side})`;
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
  options: { maskContent?: boolean } = {},
): string {
  const mask = options.maskContent ? maskContent : maskSecrets;
  const [b, a] = mask(before && comparable(before), after && comparable(after));
  return unifiedDiff(b && toYaml(b), a && toYaml(a), labels);
}
