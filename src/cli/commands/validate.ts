/** `janus validate [dir]`: offline validation of transaction directories, for pull-request CI. */
import { stat } from 'node:fs/promises';
import { stringify } from 'yaml';
import { type TreeValidation, validateTree } from '../../gitops/validate-tree.ts';
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
Checks transaction directories with exactly the rules \`janus run\` applies when they land on the
watched branch, without a cluster. [dir] is a repository root (its transactions/ folder is
checked), the transactions folder itself, or one transaction directory; default ".".

Give it the repository's policy exactly as janus run has it (the same flags or JANUS_*
variables): without --allowed-service-accounts no ServiceAccount is allowed and every directory
is refused; without --allowed-namespaces only --default-namespace is.

Every problem is printed to stderr as "file:line:column: field: message", the form editors and
CI annotators understand. With -o json or -o yaml the full report also goes to stdout.

Exit status: 0 when every directory is valid, 1 when one is not (or there is nothing to
validate), 2 on a usage error.

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
    // Checked now; sources (docs/sources.md) render with them.
    renderSettings(values);
    const report = await validateTree(target, { transactionsRoot: values.root, policy });
    process.stderr.write(humanReport(report));
    if (format === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (format === 'yaml') process.stdout.write(stringify(report, { lineWidth: 0 }));
    return report.ok ? 0 : 1;
  },
});

/** Every diagnostic on its own line, then a one-line verdict. */
export function humanReport(report: TreeValidation): string {
  const lines = report.diagnostics.map(formatDiagnostic);
  for (const dir of report.directories) lines.push(...dir.diagnostics.map(formatDiagnostic));
  const invalid = report.directories.filter((d) => !d.ok).length;
  const total = report.directories.length;
  if (total > 0) {
    const noun = total === 1 ? 'transaction directory' : 'transaction directories';
    lines.push(invalid === 0 ? `${total} ${noun}, all valid` : `${total} ${noun}, ${invalid} invalid`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
