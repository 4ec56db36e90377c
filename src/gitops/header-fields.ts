/**
 * The fields a transaction.yaml and a source declaration (src/sources/declaration.ts) share: the
 * kind, metadata, durations and the health gate, each reported with its position.
 */
import {
  API_VERSION,
  DEFAULT_TIMEOUT,
  GROUP,
  HEALTH_TARGETS,
  type HealthSpec,
  KIND,
  MAX_HEALTH_STABLE_FOR,
  MAX_HEALTH_TIMEOUT,
} from '../api/v1alpha1/index.ts';
import type { FieldPath } from '../yaml/yaml-file.ts';
import { describeType, type FieldReporter, type Fields } from './fields.ts';
import { checkAnalysis } from './health-analysis.ts';
import { dnsLabelProblem, parseDuration } from './names.ts';

const MIN_DURATION_MS = 1000;

export function reportMissing(r: FieldReporter, path: FieldPath): undefined {
  r.report('missing-field', path, 'is required', 'parent');
  return undefined;
}

export function checkKind(r: FieldReporter, top: Fields, expected: string = KIND): void {
  const apiVersion = r.requiredString(top, 'apiVersion', ['apiVersion']);
  const kind = r.requiredString(top, 'kind', ['kind']);
  if (kind !== undefined && kind !== expected) {
    r.report('wrong-kind', ['kind'], `must be ${expected}, found ${JSON.stringify(kind)}`);
  }
  if (apiVersion !== undefined && apiVersion !== API_VERSION) {
    r.report('wrong-kind', ['apiVersion'], `must be ${API_VERSION}, found ${JSON.stringify(apiVersion)}`);
  }
}

export interface MetadataFields {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * metadata: a DNS label name equal to `expectedName` (`what` says whose name it is), an optional
 * namespace, labels, and annotations outside Janus's own prefix.
 */
export function checkMetadata(
  r: FieldReporter,
  metadata: Fields,
  expectedName: string,
  what = 'the directory name',
): Partial<MetadataFields> {
  r.onlyKnownFields(metadata, ['name', 'namespace', 'labels', 'annotations'], ['metadata']);
  const name = r.requiredString(metadata, 'name', ['metadata', 'name']);
  const namespace = r.optionalString(metadata, 'namespace', ['metadata', 'namespace']);
  const nameProblem = name === undefined ? undefined : dnsLabelProblem(name);
  if (nameProblem) r.report('invalid-value', ['metadata', 'name'], nameProblem);
  else if (name !== undefined && name !== expectedName) {
    r.report('name-mismatch', ['metadata', 'name'], `must equal ${what} ${JSON.stringify(expectedName)}`);
  }
  const namespaceProblem = namespace === undefined ? undefined : dnsLabelProblem(namespace);
  if (namespaceProblem) r.report('invalid-value', ['metadata', 'namespace'], namespaceProblem);
  const validNamespace = namespaceProblem ? undefined : namespace;
  const labels =
    metadata.labels === undefined ? undefined : r.stringMap(metadata.labels, ['metadata', 'labels']);
  const annotations =
    metadata.annotations === undefined
      ? undefined
      : r.stringMap(metadata.annotations, ['metadata', 'annotations']);
  for (const key of Object.keys(annotations ?? {})) {
    if (key.startsWith(`${GROUP}/`)) {
      r.report(
        'invalid-value',
        ['metadata', 'annotations', key],
        `${GROUP}/ annotations are reserved for Janus`,
        'key',
      );
    }
  }
  return {
    ...(name !== undefined && !nameProblem && { name }),
    ...(validNamespace !== undefined && { namespace: validNamespace }),
    ...(labels !== undefined && { labels }),
    ...(annotations !== undefined && { annotations }),
  };
}

/** spec.health: which targets the gate waits for, for how long, and how long they must stay healthy. */
export function checkHealth(
  r: FieldReporter,
  value: unknown,
  timeout: string | undefined,
): HealthSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const path = ['spec', 'health'];
  const health = r.mapping(value, path);
  if (!health) return undefined;
  r.onlyKnownFields(health, ['targets', 'timeout', 'stableFor', 'analysis'], path);
  let targets: HealthSpec['targets'];
  if (health.targets !== undefined && health.targets !== null) {
    const known = HEALTH_TARGETS as readonly unknown[];
    if (known.includes(health.targets)) targets = health.targets as HealthSpec['targets'];
    else {
      r.report(
        'invalid-value',
        [...path, 'targets'],
        `must be one of ${HEALTH_TARGETS.join(', ')}, found ${JSON.stringify(health.targets)}`,
      );
    }
  }
  const healthTimeout = checkDuration(r, health.timeout, [...path, 'timeout'], MAX_HEALTH_TIMEOUT);
  const stableFor = checkStableFor(r, health.stableFor, [...path, 'stableFor'], timeout);
  const analysis = checkAnalysis(r, health.analysis, [...path, 'analysis'], stableFor);
  return {
    ...(targets !== undefined && { targets }),
    ...(healthTimeout !== undefined && { timeout: healthTimeout }),
    ...(stableFor !== undefined && { stableFor }),
    ...(analysis !== undefined && { analysis }),
  };
}

/** The bake window: 0s to 1h, and shorter than the transaction's timeout, which it must fit in. */
function checkStableFor(
  r: FieldReporter,
  value: unknown,
  path: FieldPath,
  timeout: string | undefined,
): string | undefined {
  const stableFor = checkDuration(r, value, path, MAX_HEALTH_STABLE_FOR, 0);
  if (stableFor === undefined) return undefined;
  const within = timeout ?? DEFAULT_TIMEOUT;
  if ((parseDuration(stableFor) ?? 0) >= (parseDuration(within) ?? 0)) {
    r.report(
      'invalid-value',
      path,
      `must be less than spec.timeout (${within}): the bake window must fit in the transaction`,
    );
    return undefined;
  }
  return stableFor;
}

/** A Go duration from `minMs` to `max`; undefined (reported) when it is not one. */
export function checkDuration(
  r: FieldReporter,
  value: unknown,
  path: FieldPath,
  max: string,
  minMs = MIN_DURATION_MS,
): string | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (typeof value !== 'string' || ms === undefined) {
    r.report(
      'invalid-value',
      path,
      `must be a duration such as "90s", "5m" or "1h30m", found ${describeType(value)}`,
    );
    return undefined;
  }
  if (ms < minMs) {
    r.report('invalid-value', path, `must be at least ${minMs / 1000}s, found ${JSON.stringify(value)}`);
    return undefined;
  }
  if (ms > (parseDuration(max) ?? 0)) {
    r.report('invalid-value', path, `must be at most ${max}, found ${JSON.stringify(value)}`);
    return undefined;
  }
  return value;
}
