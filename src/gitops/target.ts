/** A change's target: validating its identifying fields, and its identity after namespace defaulting. */
import { type ChangeTarget, KNOWN_CLUSTER_SCOPED } from '../api/v1alpha1/index.ts';
import type { FieldPath } from '../yaml/yaml-file.ts';
import type { FieldReporter, Fields } from './fields.ts';
import { apiVersionProblem, dnsLabelProblem, dnsSubdomainProblem, groupOf, kindProblem } from './names.ts';

/** Where each identifying field lives in the document being checked. */
export interface TargetFieldPaths {
  apiVersion: FieldPath;
  kind: FieldPath;
  name: FieldPath;
  namespace: FieldPath;
}

export const MANIFEST_TARGET_PATHS: TargetFieldPaths = {
  apiVersion: ['apiVersion'],
  kind: ['kind'],
  name: ['metadata', 'name'],
  namespace: ['metadata', 'namespace'],
};

export function inlineTargetPaths(index: number): TargetFieldPaths {
  const base = ['spec', 'changes', index, 'target'];
  return {
    apiVersion: [...base, 'apiVersion'],
    kind: [...base, 'kind'],
    name: [...base, 'name'],
    namespace: [...base, 'namespace'],
  };
}

const KNOWN_CLUSTER_SCOPED_SET: ReadonlySet<string> = new Set(KNOWN_CLUSTER_SCOPED);

export function isKnownClusterScoped(target: Pick<ChangeTarget, 'apiVersion' | 'kind'>): boolean {
  return KNOWN_CLUSTER_SCOPED_SET.has(`${groupOf(target.apiVersion)}/${target.kind}`);
}

/**
 * Checks the four identifying fields, read from `holders` (the mappings that contain each field:
 * the manifest and its metadata, or an inline target twice). Returns the target when all are valid.
 */
export function checkTarget(
  r: FieldReporter,
  holders: { top: Fields; meta: Fields | undefined },
  paths: TargetFieldPaths,
): ChangeTarget | undefined {
  const last = (p: FieldPath) => String(p[p.length - 1]);
  const meta = holders.meta ?? {};
  const apiVersion = r.requiredString(holders.top, last(paths.apiVersion), paths.apiVersion);
  const kind = r.requiredString(holders.top, last(paths.kind), paths.kind);
  const name = r.requiredString(meta, last(paths.name), paths.name);
  const namespace = r.optionalString(meta, last(paths.namespace), paths.namespace);
  let ok = apiVersion !== undefined && kind !== undefined && name !== undefined;
  const check = (value: string | undefined, path: FieldPath, problem: (v: string) => string | undefined) => {
    const message = value === undefined ? undefined : problem(value);
    if (message) {
      r.report('invalid-value', path, message);
      ok = false;
    }
  };
  check(apiVersion, paths.apiVersion, apiVersionProblem);
  check(kind, paths.kind, kindProblem);
  check(name, paths.name, dnsSubdomainProblem);
  check(namespace, paths.namespace, dnsLabelProblem);
  if (!ok || apiVersion === undefined || kind === undefined || name === undefined) return undefined;
  const target: ChangeTarget = { apiVersion, kind, name, ...(namespace !== undefined && { namespace }) };
  if (namespace !== undefined && isKnownClusterScoped(target)) {
    r.report('invalid-value', paths.namespace, `must not be set: ${kind} is cluster-scoped`);
    return undefined;
  }
  return target;
}

/** The namespace the controller will use for this target. */
export function effectiveNamespace(target: ChangeTarget, transactionNamespace: string): string {
  return target.namespace ?? (isKnownClusterScoped(target) ? '' : transactionNamespace);
}

/** Identity of the resource a target designates: the API version does not matter, the group does. */
export function targetKey(target: ChangeTarget, transactionNamespace: string): string {
  return [
    groupOf(target.apiVersion),
    target.kind,
    effectiveNamespace(target, transactionNamespace),
    target.name,
  ].join('/');
}

/** "apps/v1 Deployment default/web", as people write it in messages. */
export function describeTarget(target: ChangeTarget, transactionNamespace: string): string {
  const namespace = effectiveNamespace(target, transactionNamespace);
  return `${target.apiVersion} ${target.kind} ${namespace ? `${namespace}/` : ''}${target.name}`;
}
