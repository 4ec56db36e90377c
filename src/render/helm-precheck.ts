/**
 * A Helm chart of the checkout, checked before helm runs (pure, over a CheckoutView): it has a
 * Chart.yaml; every dependency (Chart.yaml's, or requirements.yaml's for apiVersion v1 charts),
 * in the chart and in its vendored subcharts, is vendored in charts/ (a folder whose Chart.yaml
 * has its name, or a `<name>-<version>.tgz`), whatever its `repository:` says, since a render
 * never fetches one (chart repositories and OCI references need the network); values files stay
 * in the checkout.
 */
import { parseYamlFile } from '../yaml/yaml-file.ts';
import { folderOf } from './paths.ts';
import { type CheckoutView, type InputProblem, isRecord, localReference, readConfig } from './references.ts';

/** Subcharts checked below a chart: a bound on the walk. */
const MAX_CHARTS = 200;

/** The first problem of the chart at `chart` and its values files, or undefined. */
export function checkChart(
  view: CheckoutView,
  chart: string,
  valuesFiles: readonly string[],
): InputProblem | undefined {
  const chartFile = `${chart === '' ? '' : `${chart}/`}Chart.yaml`;
  if (view.kind(chartFile) !== 'file')
    return { file: chart, message: `no Chart.yaml in ${chart === '' ? 'the repository root' : chart}` };
  for (const [i, values] of valuesFiles.entries()) {
    const found = localReference(view, chartFile, chart, `helm.valuesFiles[${i}]`, values, undefined);
    if ('message' in found) return { ...found, file: chart };
    if (found.kind !== 'file')
      return { file: chart, message: `helm.valuesFiles[${i}] ${values}: not a file` };
  }
  const queue = [chart];
  let checked = 0;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (++checked > MAX_CHARTS)
      return { file: chart, message: `more than ${MAX_CHARTS} vendored charts below ${chart}` };
    const found = checkDependencies(view, next);
    if ('message' in found) return found;
    queue.push(...found.subcharts);
  }
  return undefined;
}

/** One chart's dependencies: its problem, or its vendored subchart folders. */
function checkDependencies(view: CheckoutView, chart: string): InputProblem | { subcharts: string[] } {
  const prefix = chart === '' ? '' : `${chart}/`;
  const vendored = vendoredCharts(view, `${prefix}charts`);
  const isVendored = (name: string) =>
    vendored.names.has(name) || [...vendored.archives].some((a) => a.startsWith(`${name}-`));
  for (const name of ['Chart.yaml', 'requirements.yaml']) {
    const file = `${prefix}${name}`;
    if (view.kind(file) !== 'file') continue;
    const text = readConfig(view, file);
    if (typeof text !== 'string') return text;
    const parsed = parseYamlFile(file, text);
    const diagnostic = parsed.diagnostics[0];
    if (diagnostic) return { file, line: diagnostic.line, message: diagnostic.message };
    const doc = parsed.documents[0];
    const value = doc?.value;
    const dependencies = isRecord(value) && Array.isArray(value.dependencies) ? value.dependencies : [];
    for (const [i, dependency] of dependencies.entries()) {
      if (!isRecord(dependency) || isVendored(String(dependency.name ?? ''))) continue;
      const problem = missingDependency(
        view,
        file,
        chart,
        i,
        dependency,
        doc?.locate(['dependencies', i])?.line,
      );
      if (problem) return problem;
    }
  }
  return { subcharts: [...vendored.folders] };
}

/** A dependency not in charts/: why a render cannot have it. */
function missingDependency(
  view: CheckoutView,
  file: string,
  chart: string,
  i: number,
  dependency: Readonly<Record<string, unknown>>,
  line: number | undefined,
): InputProblem {
  const name = String(dependency.name ?? '');
  const repository = typeof dependency.repository === 'string' ? dependency.repository : '';
  const local = repository === '' || repository.startsWith('file://');
  if (repository.startsWith('file://')) {
    const target = localReference(
      view,
      file,
      chart,
      `dependencies[${i}].repository`,
      repository.slice(7),
      line,
    );
    if ('message' in target) return target;
  }
  return {
    file,
    line,
    message: `dependencies[${i}] ${JSON.stringify(name)}${local ? '' : ` from ${repository}`} is not vendored in ${chart === '' ? '' : `${chart}/`}charts/; a render fetches no chart (run helm dependency build and commit charts/)`,
  };
}

/** The charts in a charts/ folder: folders with a Chart.yaml (by its name) and archives. */
function vendoredCharts(
  view: CheckoutView,
  folder: string,
): { names: Set<string>; folders: Set<string>; archives: Set<string> } {
  const names = new Set<string>();
  const folders = new Set<string>();
  const archives = new Set<string>();
  if (view.kind(folder) !== 'folder') return { names, folders, archives };
  for (const entry of view.list(folder)) {
    const path = `${folder}/${entry}`;
    if (entry.endsWith('.tgz') && view.kind(path) === 'file') archives.add(entry);
    const chartFile = `${path}/Chart.yaml`;
    if (view.kind(chartFile) !== 'file') continue;
    // Too large to parse here: named by its folder (helm reads it, and fails, in the sandbox).
    const text = readConfig(view, chartFile);
    const value = typeof text === 'string' ? parseYamlFile(chartFile, text).documents[0]?.value : undefined;
    names.add(isRecord(value) && typeof value.name === 'string' ? value.name : entry);
    folders.add(folderOf(chartFile));
  }
  return { names, folders, archives };
}
