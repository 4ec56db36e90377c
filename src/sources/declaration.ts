/**
 * Source declarations as written in Git (docs/sources.md, "Declaring a source"): one file per
 * source directly in the sources folder, `<name>.yaml`, holding one Source document. Each is
 * parsed with the project's bounded YAML parser, checked field by field against the Source schema
 * (the CRD's own CEL rules by hand: exactly one render method, the drift interval, the bake window)
 * and against the repository's policy (its namespace and ServiceAccount); every problem is a
 * diagnostic with file, line and column. `janus run` reads them at the watched branch's tip,
 * `janus validate` from disk, through the same DirectoryReader. Pure but for the reader.
 */
import {
  HELM_HOOKS,
  MAX_API_VERSIONS,
  MAX_LOCK_TIMEOUT,
  MAX_SOURCE_NAME,
  MAX_TIMEOUT,
  MAX_VALUES_FILES,
  SOURCE_KIND,
  type SourceSpec,
} from '../api/v1alpha1/index.ts';
import { type DirectoryReader, joinPath, TooManyEntriesError } from '../gitops/directory-reader.ts';
import { describeType, FieldReporter, type Fields } from '../gitops/fields.ts';
import {
  checkDuration,
  checkHealth,
  checkKind,
  checkMetadata,
  reportMissing,
} from '../gitops/header-fields.ts';
import { dnsLabelProblem, dnsSubdomainProblem, parseDuration } from '../gitops/names.ts';
import { namespaceRefusal, type RepositoryPolicy, serviceAccountRefusal } from '../gitops/policy.ts';
import type { RenderMethod, RenderRequest } from '../render/types.ts';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import { type FieldPath, parseYamlFile } from '../yaml/yaml-file.ts';

/** The folder of source declarations when --sources-root does not say. */
export const DEFAULT_SOURCES_ROOT = 'sources';

export const DECLARATION_LIMITS = {
  /** Source files in the folder, checked before any is read: each is rendered at every new commit. */
  maxSources: 128,
  /** One declaration, inline Helm values included (the Source object must fit etcd with its status). */
  maxFileBytes: 256 * 1024,
} as const;

/** A valid declaration: the Source `janus run` keeps, and how to render it. */
export interface SourceDeclaration {
  /** Repository-relative path of the file, e.g. "sources/shop.yaml". */
  file: string;
  name: string;
  /** metadata.namespace, else the repository's default namespace. */
  namespace: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** The spec as written (the API server fills in the defaults). */
  spec: SourceSpec;
}

/** A declaration with problems: recorded as the rejection of the source it names. */
export interface RejectedDeclaration {
  file: string;
  /** The file's base name: the source it declares. */
  name: string;
  /** The namespace it names (or the default): where its rejection is filed. */
  namespace: string;
  diagnostics: Diagnostic[];
}

export type DeclarationResult =
  | { ok: true; declaration: SourceDeclaration }
  | { ok: false; rejected: RejectedDeclaration };

export interface Declarations {
  sources: SourceDeclaration[];
  rejected: RejectedDeclaration[];
  /** About the folder as a whole (too many files): then no source is read at all. */
  problems: Diagnostic[];
}

/**
 * Every declaration in `root` (no folder: none). Files not named `*.yaml` and subfolders are not
 * sources and are skipped; a symbolic link named `*.yaml` is refused. Reader failures (I/O)
 * propagate: a transient error is no rejection.
 */
export async function readDeclarations(
  reader: DirectoryReader,
  root: string,
  policy: RepositoryPolicy,
): Promise<Declarations> {
  const out: Declarations = { sources: [], rejected: [], problems: [] };
  let entries: Awaited<ReturnType<DirectoryReader['list']>>;
  try {
    entries = await reader.list(root, DECLARATION_LIMITS.maxSources);
  } catch (error) {
    if (!(error instanceof TooManyEntriesError)) throw error;
    out.problems.push({ code: 'too-many-files', file: root, message: error.message.slice(root.length + 2) });
    return out;
  }
  const files = (entries ?? []).filter((e) => e.name.endsWith('.yaml')).sort(byName);
  if (files.length > DECLARATION_LIMITS.maxSources) {
    out.problems.push({
      code: 'too-many-files',
      file: root,
      message: `${files.length} source files; at most ${DECLARATION_LIMITS.maxSources} are allowed (each is rendered at every new commit)`,
    });
    return out;
  }
  for (const entry of files) {
    const file = joinPath(root, entry.name);
    const result =
      entry.type === 'file'
        ? await readDeclaration(reader, file, policy)
        : refuseFile(file, policy, `${describeEntry(entry.type)}; a source is declared in a file of its own`);
    if (result === undefined) continue;
    if (result.ok) out.sources.push(result.declaration);
    else out.rejected.push(result.rejected);
  }
  return out;
}

async function readDeclaration(
  reader: DirectoryReader,
  file: string,
  policy: RepositoryPolicy,
): Promise<DeclarationResult> {
  const content = await reader.read(file, DECLARATION_LIMITS.maxFileBytes);
  if (!content.ok) {
    return refuseFile(
      file,
      policy,
      `the file is ${content.size} bytes; a source declaration may have at most ${DECLARATION_LIMITS.maxFileBytes}`,
      'file-too-large',
    );
  }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(content.bytes);
  return parseDeclaration(file, text, policy);
}

function refuseFile(
  file: string,
  policy: RepositoryPolicy,
  message: string,
  code: Diagnostic['code'] = 'unreadable-file',
): DeclarationResult {
  return {
    ok: false,
    rejected: {
      file,
      name: nameOfFile(file),
      namespace: policy.defaultNamespace,
      diagnostics: [{ code, file, message }],
    },
  };
}

/** The source a file declares: its base name without `.yaml`. */
export function nameOfFile(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1).replace(/\.yaml$/, '');
}

/** Parses one declaration, reporting every problem. */
export function parseDeclaration(file: string, text: string, policy: RepositoryPolicy): DeclarationResult {
  const out: Diagnostic[] = [];
  const name = nameOfFile(file);
  const rejected = (namespace: string): DeclarationResult => ({
    ok: false,
    rejected: { file, name, namespace, diagnostics: out },
  });
  const nameProblem = sourceNameProblem(name);
  if (nameProblem) out.push({ code: 'invalid-value', file, message: `the file name ${nameProblem}` });
  const parsed = parseYamlFile(file, text);
  out.push(...parsed.diagnostics);
  const [document, extra] = parsed.documents;
  if (parsed.diagnostics.length > 0) return rejected(policy.defaultNamespace);
  if (!document) {
    out.push({ code: 'not-a-mapping', file, message: 'the file is empty; it must hold a Source' });
    return rejected(policy.defaultNamespace);
  }
  if (extra) {
    out.push({
      code: 'invalid-value',
      file,
      document: extra.index,
      message: 'a source file holds a single YAML document: declare each source in a file of its own',
    });
  }
  const r = new FieldReporter(file, document, false, out);
  const top = r.mapping(document.value, []);
  if (!top) return rejected(policy.defaultNamespace);
  r.onlyKnownFields(top, ['apiVersion', 'kind', 'metadata', 'spec'], []);
  checkKind(r, top, SOURCE_KIND);
  const metadata =
    top.metadata === undefined ? reportMissing(r, ['metadata']) : r.mapping(top.metadata, ['metadata']);
  const meta = metadata ? checkMetadata(r, metadata, name, 'the file name') : {};
  if (meta.name !== undefined && meta.name.length > MAX_SOURCE_NAME) {
    r.report('invalid-value', ['metadata', 'name'], nameProblem ?? 'is too long');
  }
  const namespace = meta.namespace ?? policy.defaultNamespace;
  const spec = top.spec === undefined ? reportMissing(r, ['spec']) : r.mapping(top.spec, ['spec']);
  const checked = spec ? checkSourceSpec(r, spec) : undefined;
  const namespaceProblem = namespaceRefusal(policy, namespace);
  if (namespaceProblem) {
    r.report(
      'namespace-not-allowed',
      ['metadata', 'namespace'],
      `namespace ${JSON.stringify(namespace)} ${namespaceProblem}`,
      meta.namespace !== undefined ? 'value' : 'parent',
    );
  }
  if (checked?.serviceAccountName !== undefined && !namespaceProblem) {
    const refusal = serviceAccountRefusal(policy, namespace, checked.serviceAccountName);
    if (refusal) r.report('service-account-not-allowed', ['spec', 'serviceAccountName'], refusal);
  }
  if (out.length > 0 || checked === undefined || meta.name === undefined) return rejected(namespace);
  return {
    ok: true,
    declaration: {
      file,
      name: meta.name,
      namespace,
      ...(meta.labels && { labels: meta.labels }),
      ...(meta.annotations && { annotations: meta.annotations }),
      spec: checked,
    },
  };
}

/** Why `name` cannot name a source (a DNS label short enough for `<name>-<7 hex>`), or undefined. */
export function sourceNameProblem(name: string): string | undefined {
  if (name.length > MAX_SOURCE_NAME)
    return `${JSON.stringify(name)} is ${name.length} characters; a source's name has at most ${MAX_SOURCE_NAME} (its transactions are <name>-<7 hex of the commit>)`;
  const problem = dnsLabelProblem(name);
  return problem && `${JSON.stringify(name)} ${problem}`;
}

const SPEC_FIELDS = [
  'path',
  'kustomize',
  'helm',
  'plain',
  'serviceAccountName',
  'prune',
  'timeout',
  'lockTimeout',
  'health',
  'drift',
] as const;
const METHODS = ['kustomize', 'helm', 'plain'] as const;
const MAX_PATH = 1024;

function checkSourceSpec(r: FieldReporter, spec: Fields): SourceSpec | undefined {
  const at = (...path: (string | number)[]): FieldPath => ['spec', ...path];
  r.onlyKnownFields(spec, SPEC_FIELDS, ['spec']);
  const path = r.requiredString(spec, 'path', at('path'));
  const pathProblem = path === undefined ? undefined : repositoryPathProblem(path);
  if (pathProblem) r.report('invalid-value', at('path'), pathProblem);
  const serviceAccountName = r.requiredString(spec, 'serviceAccountName', at('serviceAccountName'));
  const saProblem = serviceAccountName === undefined ? undefined : dnsSubdomainProblem(serviceAccountName);
  if (saProblem) r.report('invalid-value', at('serviceAccountName'), saProblem);
  checkOneMethod(r, spec);
  const kustomize = spec.kustomize == null ? undefined : r.mapping(spec.kustomize, at('kustomize'));
  if (kustomize) r.onlyKnownFields(kustomize, [], at('kustomize'));
  const helm = spec.helm == null ? undefined : checkHelm(r, spec.helm);
  const plain = spec.plain == null ? undefined : checkPlain(r, spec.plain);
  const prune = optionalBoolean(r, spec.prune, at('prune'));
  const timeout = checkDuration(r, spec.timeout, at('timeout'), MAX_TIMEOUT);
  const lockTimeout = checkDuration(r, spec.lockTimeout, at('lockTimeout'), MAX_LOCK_TIMEOUT);
  const health = checkHealth(r, spec.health, timeout);
  const drift = spec.drift == null ? undefined : checkDrift(r, spec.drift);
  if (path === undefined || pathProblem || serviceAccountName === undefined || saProblem) return undefined;
  return {
    path,
    ...(kustomize && { kustomize: {} }),
    ...(helm && { helm }),
    ...(plain && { plain }),
    serviceAccountName,
    ...(prune !== undefined && { prune }),
    ...(timeout !== undefined && { timeout }),
    ...(lockTimeout !== undefined && { lockTimeout }),
    ...(health !== undefined && { health }),
    ...(drift !== undefined && { drift }),
  };
}

/** Exactly one of kustomize, helm and plain: the CRD's CEL rule. */
function checkOneMethod(r: FieldReporter, spec: Fields): void {
  const given = METHODS.filter((m) => spec[m] !== undefined && spec[m] !== null);
  if (given.length === 1) return;
  const message = `exactly one of kustomize, helm and plain says how the path is rendered; ${given.length === 0 ? 'none is given' : `${given.join(' and ')} are given`}`;
  if (given.length === 0) r.report('missing-field', ['spec', 'kustomize'], message, 'parent');
  else r.report('invalid-value', ['spec', given[1] as string], message, 'key');
}

/** A path in the repository, from its root: never absolute, never out of it (the CRD's rule). */
function repositoryPathProblem(path: string): string | undefined {
  if (path.length > MAX_PATH) return `must be at most ${MAX_PATH} characters (has ${path.length})`;
  if (path.startsWith('/') || path.split('/').includes('..'))
    return 'must be a path in the repository, from its root: not absolute, no ".." segment';
  return undefined;
}

type HelmSpec = NonNullable<SourceSpec['helm']>;

const KUBE_VERSION = /^v?[0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

function checkHelm(r: FieldReporter, value: unknown): HelmSpec | undefined {
  const path = ['spec', 'helm'];
  const helm = r.mapping(value, path);
  if (!helm) return undefined;
  r.onlyKnownFields(
    helm,
    ['releaseName', 'valuesFiles', 'values', 'includeCRDs', 'hooks', 'kubeVersion', 'apiVersions'],
    path,
  );
  const releaseName = r.optionalString(helm, 'releaseName', [...path, 'releaseName']);
  const releaseProblem =
    releaseName === undefined
      ? undefined
      : releaseName.length > 53
        ? `must be at most 53 characters (Helm's bound; has ${releaseName.length})`
        : dnsLabelProblem(releaseName);
  if (releaseProblem) r.report('invalid-value', [...path, 'releaseName'], releaseProblem);
  const valuesFiles = stringList(r, helm.valuesFiles, [...path, 'valuesFiles'], MAX_VALUES_FILES, MAX_PATH);
  const values = helm.values == null ? undefined : r.mapping(helm.values, [...path, 'values']);
  const includeCRDs = optionalBoolean(r, helm.includeCRDs, [...path, 'includeCRDs']);
  let hooks: HelmSpec['hooks'];
  if (helm.hooks != null) {
    if ((HELM_HOOKS as readonly unknown[]).includes(helm.hooks)) hooks = helm.hooks as HelmSpec['hooks'];
    else
      r.report(
        'invalid-value',
        [...path, 'hooks'],
        `must be one of ${HELM_HOOKS.join(', ')}, found ${describeType(helm.hooks)}`,
      );
  }
  const kubeVersion = r.optionalString(helm, 'kubeVersion', [...path, 'kubeVersion']);
  if (kubeVersion !== undefined && (kubeVersion.length > 64 || !KUBE_VERSION.test(kubeVersion)))
    r.report('invalid-value', [...path, 'kubeVersion'], 'must be a Kubernetes version such as "1.36.0"');
  const apiVersions = stringList(r, helm.apiVersions, [...path, 'apiVersions'], MAX_API_VERSIONS, 317);
  return {
    ...(releaseName !== undefined && !releaseProblem && { releaseName }),
    ...(valuesFiles && { valuesFiles }),
    ...(values && { values }),
    ...(includeCRDs !== undefined && { includeCRDs }),
    ...(hooks && { hooks }),
    ...(kubeVersion !== undefined && { kubeVersion }),
    ...(apiVersions && { apiVersions }),
  };
}

function checkPlain(r: FieldReporter, value: unknown): NonNullable<SourceSpec['plain']> | undefined {
  const path = ['spec', 'plain'];
  const plain = r.mapping(value, path);
  if (!plain) return undefined;
  r.onlyKnownFields(plain, ['recurse'], path);
  const recurse = optionalBoolean(r, plain.recurse, [...path, 'recurse']);
  return recurse === undefined ? {} : { recurse };
}

function checkDrift(r: FieldReporter, value: unknown): NonNullable<SourceSpec['drift']> | undefined {
  const path = ['spec', 'drift'];
  const drift = r.mapping(value, path);
  if (!drift) return undefined;
  r.onlyKnownFields(drift, ['interval', 'correct'], path);
  let interval: string | undefined;
  if (drift.interval != null) {
    const ms = typeof drift.interval === 'string' ? parseDuration(drift.interval) : undefined;
    if (ms === undefined || (ms !== 0 && (ms < 60_000 || ms > 24 * 3600_000)))
      r.report(
        'invalid-value',
        [...path, 'interval'],
        `must be 0s (never) or a duration from 1m to 24h, found ${describeType(drift.interval)}`,
      );
    else interval = drift.interval as string;
  }
  const correct = optionalBoolean(r, drift.correct, [...path, 'correct']);
  return {
    ...(interval !== undefined && { interval }),
    ...(correct !== undefined && { correct }),
  };
}

function optionalBoolean(r: FieldReporter, value: unknown, path: FieldPath): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  r.report('invalid-value', path, `must be true or false, found ${describeType(value)}`);
  return undefined;
}

function stringList(
  r: FieldReporter,
  value: unknown,
  path: FieldPath,
  maxItems: number,
  maxLength: number,
): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    r.report('invalid-value', path, `must be a list of strings, found ${describeType(value)}`);
    return undefined;
  }
  if (value.length > maxItems) {
    r.report('invalid-value', path, `must have at most ${maxItems} items (has ${value.length})`);
    return undefined;
  }
  let ok = true;
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string' || item === '' || item.length > maxLength) {
      r.report(
        'invalid-value',
        [...path, i],
        `must be a non-empty string of at most ${maxLength} characters, found ${describeType(item)}`,
      );
      ok = false;
    }
  });
  return ok ? (value as string[]) : undefined;
}

function describeEntry(type: string): string {
  return type === 'symlink' ? 'a symbolic link' : type === 'directory' ? 'a folder' : `a ${type}`;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** How the declared spec is rendered, with the schema's defaults (docs/sources.md). */
export function renderRequestOf(source: {
  name: string;
  namespace: string;
  spec: SourceSpec;
}): RenderRequest {
  const { spec } = source;
  let method: RenderMethod;
  if (spec.helm) {
    method = {
      kind: 'helm',
      releaseName: spec.helm.releaseName ?? source.name,
      valuesFiles: spec.helm.valuesFiles ?? [],
      values: spec.helm.values ?? {},
      includeCRDs: spec.helm.includeCRDs ?? true,
      hooks: spec.helm.hooks ?? 'Ignore',
      kubeVersion: spec.helm.kubeVersion,
      apiVersions: spec.helm.apiVersions ?? [],
    };
  } else if (spec.plain) method = { kind: 'plain', recurse: spec.plain.recurse ?? false };
  else method = { kind: 'kustomize' };
  return { path: spec.path, method, namespace: source.namespace };
}
