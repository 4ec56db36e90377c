/**
 * Diffs of Kubernetes objects as reviewers read them: YAML with sorted keys, without the
 * metadata the server sets on every write, and with Secret values masked (as `kubectl diff`
 * does, but without telling a changed value from a kept one), so a plan or a recovery can be
 * pasted into a pull request or a ticket. Pure.
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

/** Whether this is a Secret (core group). */
export const isSecret = (obj: KubeObject | undefined): boolean =>
  obj?.apiVersion === 'v1' && obj.kind === 'Secret';
const SECRET_FIELDS = ['data', 'stringData'] as const;

/**
 * What a secret value reads as in a diff, on either side. The same text whether the value
 * changed or not: a diff that told a changed value from a kept one would answer anyone who can
 * make a plan compare a guess with the live value (encrypt it to the namespace's public key,
 * open a pull request, read the verdict from CI). Keys added or removed still show.
 */
export const MASKED = '***';

/**
 * Said of a target whose content is secret and exists on both sides: MASKED on both, whether a
 * value changes or not.
 */
export const VALUES_NOT_COMPARED = 'secret content: its values are masked and never compared';

/**
 * Replaces Secret values on both sides (`data`, `stringData`, and kubectl's last-applied
 * annotation) with MASKED, whatever they are: keys stay visible, so added and removed keys still
 * show, but a changed value does not (unlike `kubectl diff`, which tells them apart).
 */
export function maskSecrets(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (!isSecret(before) && !isSecret(after)) return [before, after];
  return [before && maskSecret(before), after && maskSecret(after)];
}

function maskSecret(obj: KubeObject): KubeObject {
  const out = structuredClone(obj);
  for (const field of SECRET_FIELDS) {
    const values = out[field];
    if (isTree(values)) for (const key of Object.keys(values)) values[key] = MASKED;
  }
  return maskLastApplied(out);
}

/** `kubectl apply` keeps the whole object it applied, values and all, in this annotation. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The LAST_APPLIED annotation masked as a value is (`obj` is a copy). */
function maskLastApplied(obj: KubeObject): KubeObject {
  const annotations = obj.metadata.annotations;
  if (annotations && LAST_APPLIED in annotations) annotations[LAST_APPLIED] = MASKED;
  return obj;
}

/** What identifies an object: never masked. */
const IDENTITY_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Replaces every value of both sides but their identity (apiVersion, kind, metadata) with
 * MASKED, leaf by leaf, keys and list lengths kept: for an object of another kind whose content
 * is a secret too (a kind --sops-kinds allows SOPS content to be applied to). A Secret is masked
 * as maskSecrets masks it.
 */
export function maskContent(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (isSecret(before) || isSecret(after)) return maskSecrets(before, after);
  const mask = (obj: KubeObject | undefined) =>
    obj &&
    maskLastApplied(
      Object.fromEntries(
        Object.entries(structuredClone(obj)).map(([key, value]) => [
          key,
          IDENTITY_FIELDS.has(key) ? value : masked(value),
        ]),
      ) as KubeObject,
    );
  return [mask(before), mask(after)];
}

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null;

/** `value` with every leaf replaced by MASKED. */
function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (isTree(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v)]));
  return MASKED;
}

/** YAML as kubectl prints it: YAML 1.1 quoting, so a string "on" or "yes" never reads as a boolean. */
export function toYaml(obj: KubeObject): string {
  return stringify(obj, { sortMapEntries: true, lineWidth: 0, version: '1.1' });
}

/**
 * The unified diff from `before` to `after` (either may be absent: the object does not exist),
 * '' when a reviewer would see no difference. Masked values are never compared: two sides that
 * differ only in a secret value give '' too (the caller says so: plan-view.ts's planChange).
 * `maskContent`: the content is secret whatever its kind (a kind --sops-kinds allows).
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
