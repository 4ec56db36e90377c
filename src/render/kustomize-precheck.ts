/**
 * Every kustomization reachable from a source's path, checked before kustomize runs (pure, over a
 * CheckoutView): each path it names (resources, components, bases, crds, patches, generator
 * files and envs, replacements, openapi, configurations, generators, transformers, validators)
 * must be a file or folder of the checkout, never remote, absolute or out of it; Helm charts
 * (which need `--enable-helm`) and plugin configurations other than kustomize's built-ins (exec
 * and container KRM functions, external plugins) are refused. Each problem names the
 * kustomization, its line and the entry. kustomize's own load restrictor (RootOnly) and the
 * absence of --enable-alpha-plugins / --enable-exec / --network stay as the second wall.
 */
import { parseYamlFile, type YamlDocument } from '../yaml/yaml-file.ts';
import {
  type CheckoutView,
  type InputProblem,
  isRecord,
  localReference,
  looksRemote,
  readConfig,
} from './references.ts';

/** The names kustomize looks for in a folder, in its order. */
export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** Kustomizations visited from one source: a bound on the walk, far beyond real overlays. */
export const MAX_KUSTOMIZATIONS = 1000;

/** Fields whose entries are paths (or remote references) kustomize loads. */
const PATH_LISTS = ['resources', 'bases', 'components', 'crds', 'configurations'] as const;
/** Fields of plugin configurations: a file, a folder (a kustomization), or inline YAML. */
const PLUGIN_LISTS = ['generators', 'transformers', 'validators'] as const;
const HELM_FIELDS = ['helmCharts', 'helmChartInflationGenerator', 'helmGlobals'] as const;

/** The kustomization file of folder `folder`, if it has one. */
export function kustomizationIn(view: CheckoutView, folder: string): string | undefined {
  for (const name of KUSTOMIZATION_FILES) {
    const path = folder === '' ? name : `${folder}/${name}`;
    if (view.kind(path) === 'file') return path;
  }
  return undefined;
}

/**
 * The first problem of the kustomizations reachable from `root`, or undefined when none has one.
 * `files` receives every file they name (what kustomize reads besides the kustomizations).
 */
export function checkKustomizations(
  view: CheckoutView,
  root: string,
  files?: Set<string>,
): InputProblem | undefined {
  const first = kustomizationIn(view, root);
  if (first === undefined) {
    return {
      file: root,
      message: `no ${KUSTOMIZATION_FILES.join(', ')} in ${root === '' ? 'the repository root' : root}`,
    };
  }
  const queue = [root];
  const seen = new Set(queue);
  for (let folder = queue.shift(); folder !== undefined; folder = queue.shift()) {
    const file = kustomizationIn(view, folder);
    if (file === undefined) continue; // a folder of plain resources: kustomize reads it as such
    const found = checkOne(view, folder, file, files);
    if ('message' in found) return found;
    for (const next of found.folders) {
      if (seen.has(next)) continue;
      if (seen.size >= MAX_KUSTOMIZATIONS)
        return { file, message: `more than ${MAX_KUSTOMIZATIONS} kustomizations reachable from ${root}` };
      seen.add(next);
      queue.push(next);
    }
  }
  return undefined;
}

/** A path a kustomization names: where (its entry, for messages; its field path, for the line). */
interface Named {
  readonly entry: string;
  readonly at: readonly (string | number)[];
  readonly value: unknown;
  /** A plugin configuration: a file, a folder (a kustomization) or inline YAML. */
  readonly plugin?: boolean | undefined;
}

/** Every path kustomization `k` names, in the order of its fields. */
export function namedPaths(k: Readonly<Record<string, unknown>>): Named[] {
  const named: Named[] = [];
  const add = (entry: string, at: (string | number)[], value: unknown, plugin?: boolean) =>
    named.push({ entry, at, value, plugin });
  for (const field of PATH_LISTS)
    for (const [i, v] of entries(k[field])) add(`${field}[${i}]`, [field, i], v);
  for (const [i, v] of entries(k.patchesStrategicMerge)) {
    // An entry is a file, or a patch written inline.
    if (!(typeof v === 'string' && isInlineYaml(v)))
      add(`patchesStrategicMerge[${i}]`, ['patchesStrategicMerge', i], v);
  }
  for (const field of ['patches', 'patchesJson6902', 'replacements'] as const) {
    for (const [i, v] of entries(k[field])) {
      if (isRecord(v)) add(`${field}[${i}].path`, [field, i, 'path'], v.path);
    }
  }
  if (isRecord(k.openapi)) add('openapi.path', ['openapi', 'path'], k.openapi.path);
  for (const field of ['configMapGenerator', 'secretGenerator'] as const)
    named.push(...generatorPaths(field, k[field]));
  for (const field of PLUGIN_LISTS)
    for (const [i, v] of entries(k[field])) add(`${field}[${i}]`, [field, i], v, true);
  return named;
}

/** The files and env files of a configMapGenerator or secretGenerator. */
function generatorPaths(field: string, generators: unknown): Named[] {
  const named: Named[] = [];
  for (const [i, generator] of entries(generators)) {
    if (!isRecord(generator)) continue;
    for (const [j, v] of entries(generator.files)) {
      // `key=path` or `path`.
      const value = typeof v === 'string' ? v.slice(v.indexOf('=') + 1) : v;
      named.push({ entry: `${field}[${i}].files[${j}]`, at: [field, i, 'files', j], value });
    }
    for (const [j, v] of entries(generator.envs))
      named.push({ entry: `${field}[${i}].envs[${j}]`, at: [field, i, 'envs', j], value: v });
    named.push({ entry: `${field}[${i}].env`, at: [field, i, 'env'], value: generator.env });
  }
  return named;
}

/** A Helm chart in a kustomization: refused. */
function helmProblem(
  k: Readonly<Record<string, unknown>>,
  file: string,
  doc: YamlDocument,
): InputProblem | undefined {
  const field = HELM_FIELDS.find((f) => k[f] !== undefined);
  if (field === undefined) return undefined;
  return {
    file,
    line: doc.locate([field], 'key')?.line,
    message: `${field}: Helm charts in a kustomization need kustomize --enable-helm, which a render never uses; declare the chart as a helm source`,
  };
}

/** One kustomization: its problem, or the folders it names (to be checked in turn). */
function checkOne(
  view: CheckoutView,
  folder: string,
  file: string,
  files: Set<string> | undefined,
): InputProblem | { folders: string[] } {
  const text = readConfig(view, file);
  if (typeof text !== 'string') return text;
  const parsed = parseYamlFile(file, text);
  const diagnostic = parsed.diagnostics[0];
  if (diagnostic) return { file, line: diagnostic.line, message: diagnostic.message };
  const doc = parsed.documents[0];
  if (!doc) return { folders: [] };
  if (!isRecord(doc.value)) return { file, line: 1, message: 'a kustomization is a mapping' };
  const k = doc.value;
  const helm = helmProblem(k, file, doc);
  if (helm) return helm;
  const folders: string[] = [];
  for (const { entry, at, value, plugin } of namedPaths(k)) {
    if (typeof value !== 'string') continue;
    const line = doc.locate(at)?.line;
    if (plugin && isInlineYaml(value)) {
      const problem = pluginProblem(parseYamlFile(file, value).documents, file, entry, line);
      if (problem) return problem;
      continue;
    }
    const found = localReference(view, file, folder, entry, value, line);
    if ('message' in found) return found;
    if (found.kind === 'folder') folders.push(found.path);
    else files?.add(found.path);
    if (found.kind === 'file' && plugin) {
      const configText = readConfig(view, found.path);
      if (typeof configText !== 'string') return configText;
      const config = parseYamlFile(found.path, configText);
      const problem = pluginProblem(config.documents, found.path, `${entry} (${found.path})`, undefined);
      if (problem) return problem;
    }
  }
  return { folders };
}

/**
 * Only kustomize's built-in plugins (apiVersion `builtin`) may be configured: anything else is
 * an external plugin or a KRM function (exec or container), which a render never runs.
 */
function pluginProblem(
  documents: readonly YamlDocument[],
  file: string,
  entry: string,
  line: number | undefined,
): InputProblem | undefined {
  for (const doc of documents) {
    const config = doc.value;
    if (!isRecord(config)) continue;
    const metadata = isRecord(config.metadata) ? config.metadata : {};
    const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
    const fn = Object.keys(annotations).find((a) => /^config\.(kubernetes\.io|k8s\.io)\/function$/.test(a));
    const where = line ?? doc.locate(['apiVersion'])?.line;
    if (fn !== undefined) {
      return {
        file,
        line: doc.locate(['metadata', 'annotations', fn])?.line ?? where,
        message: `${entry}: a KRM function (${fn}); a render runs no exec or container functions`,
      };
    }
    if (config.apiVersion !== 'builtin') {
      return {
        file,
        line: where,
        message: `${entry}: an external plugin (apiVersion ${JSON.stringify(config.apiVersion)}, kind ${JSON.stringify(config.kind)}); a render runs kustomize's built-in plugins only`,
      };
    }
  }
  return undefined;
}

/** A string that is YAML written inline (a patch, a plugin configuration), not a path. */
function isInlineYaml(value: string): boolean {
  return value.includes('\n') || (/^\s*[\w.-]+:\s/.test(value) && !looksRemote(value));
}

function entries(value: unknown): [number, unknown][] {
  return Array.isArray(value) ? value.map((v, i): [number, unknown] => [i, v]) : [];
}
