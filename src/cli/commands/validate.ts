/** `janus validate [dir]`: offline validation of transaction directories and sources, for pull-request CI. */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type TreeValidation, validateTree } from '../../gitops/validate-tree.ts';
import { Renderer } from '../../render/renderer.ts';
import { type SourcesValidation, validateSources } from '../../sources/validate-sources.ts';
import { formatDiagnostic } from '../../yaml/diagnostic.ts';
import {
  defineCommand,
  POLICY_CONTROLLER_NAMESPACE_FLAG,
  policyFromFlags,
  SETTINGS_FLAG,
  TRANSACTION_DIRECTORY_FLAGS,
  UsageError,
} from '../command.ts';
import { RENDER_FLAGS, renderSettings } from '../render-settings.ts';

export const VALIDATE_FLAGS = {
  output: {
    type: 'string',
    short: 'o',
    env: 'JANUS_OUTPUT',
    placeholder: 'json|yaml',
    description: 'also write the report to stdout in this format',
  },
  ...TRANSACTION_DIRECTORY_FLAGS,
  ...SETTINGS_FLAG,
  ...POLICY_CONTROLLER_NAMESPACE_FLAG,
  ...RENDER_FLAGS,
} as const;

export default defineCommand({
  name: 'validate',
  usage: 'janus validate [dir] [flags]',
  description: `
Checks transaction directories and sources with exactly the rules \`janus run\` applies when they
land on the watched branch, without a cluster. [dir] is a repository root (its transactions/
folder and its sources/ folder are checked), the transactions folder itself, or one transaction
directory; default ".".

Each source (sources/<name>.yaml, see docs/sources.md) is read as janus run reads it, rendered
from the local folder with the real kustomize or helm in the same sandbox (--kustomize-path,
--helm-path, the --render-* bounds), and every rendered object is checked against the policy:
its namespace, and --allowed-cluster-kinds for a cluster-scoped one. Offline, a kind neither the
built-in list nor the render's own CustomResourceDefinitions settle is taken to be namespaced.

Give it the repository's policy exactly as janus run has it (the same flags or JANUS_*
variables): without --allowed-service-accounts no ServiceAccount is allowed and every directory
is refused; without --allowed-namespaces only --default-namespace is.

Every problem is printed to stderr as "file:line:column: field: message", the form editors and
CI annotators understand. With -o json or -o yaml the full report also goes to stdout.

Exit status: 0 when every directory and source is valid, 1 when one is not (or there is nothing
to validate), 2 on a usage error.

Example, in CI:
  janus validate . --allowed-namespaces shop,payments --allowed-service-accounts deployer`,
  flags: VALIDATE_FLAGS,
  async run(values, args) {
    if (args.length > 1) throw new UsageError(`expected at most one directory, got ${args.length}`);
    const format = values.output;
    if (format !== undefined && format !== 'json' && format !== 'yaml') {
      throw new UsageError(`-o/--output: expected json or yaml, got "${format}"`);
    }
    const target = args[0] ?? '.';
    const info = await stat(target).catch(() => undefined);
    if (!info?.isDirectory())
      throw new UsageError(`${target}: ${info ? 'not a directory' : 'no such directory'}`);
    const policy = policyFromFlags(values, values['controller-namespace']);
    const render = renderSettings(values);
    const sourcesRoot = values['sources-root'].replace(/^\/+|\/+$/g, '');
    const hasSources = await isDirectory(join(target, ...sourcesRoot.split('/')));
    const tree = await validateTree(target, { transactionsRoot: values.root, policy });
    // A repository with sources and no transactions folder has nothing wrong with it.
    const directories =
      hasSources &&
      tree.directories.length === 0 &&
      tree.diagnostics.every((d) => d.code === 'missing-transaction-file')
        ? { ok: true, directories: [], diagnostics: [] }
        : tree;
    const sources = hasSources ? await validateAll(target, sourcesRoot, policy, render) : undefined;
    const report: ValidationReport = {
      ...directories,
      ok: directories.ok && (sources?.ok ?? true),
      ...(sources && { sources: sources.sources, sourceDiagnostics: sources.diagnostics }),
    };
    process.stderr.write(humanReport(report));
    if (format === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (format === 'yaml') process.stdout.write(stringify(report, { lineWidth: 0 }));
    return report.ok ? 0 : 1;
  },
});

/** What validate reports: the directories, and the sources when the repository has any. */
export interface ValidationReport extends TreeValidation {
  sources?: SourcesValidation['sources'];
  /** About the sources folder as a whole. */
  sourceDiagnostics?: SourcesValidation['diagnostics'];
}

async function validateAll(
  target: string,
  root: string,
  policy: ReturnType<typeof policyFromFlags>,
  render: ReturnType<typeof renderSettings>,
): Promise<SourcesValidation> {
  const renderer = new Renderer({ tools: render.tools, limits: render.limits });
  try {
    return await validateSources(target, { root, policy, renderer });
  } finally {
    renderer.stop();
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** Every diagnostic on its own line, then a one-line verdict for the directories and one for the sources. */
export function humanReport(report: ValidationReport): string {
  const lines = report.diagnostics.map(formatDiagnostic);
  for (const dir of report.directories) lines.push(...dir.diagnostics.map(formatDiagnostic));
  lines.push(...(report.sourceDiagnostics ?? []).map(formatDiagnostic));
  for (const source of report.sources ?? []) lines.push(...source.diagnostics.map(formatDiagnostic));
  const verdict = (total: number, invalid: number, one: string, many: string) => {
    if (total === 0) return;
    const noun = total === 1 ? one : many;
    lines.push(invalid === 0 ? `${total} ${noun}, all valid` : `${total} ${noun}, ${invalid} invalid`);
  };
  verdict(
    report.directories.length,
    report.directories.filter((d) => !d.ok).length,
    'transaction directory',
    'transaction directories',
  );
  const sources = report.sources ?? [];
  verdict(sources.length, sources.filter((s) => !s.ok).length, 'source', 'sources');
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
