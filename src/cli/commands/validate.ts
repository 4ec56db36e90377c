/** `janus validate [dir]`: offline validation of transaction directories, for pull-request CI. */
import { stat } from 'node:fs/promises';
import { stringify } from 'yaml';
import { formatDiagnostic } from '../../gitops/diagnostic.ts';
import { dnsLabelProblem } from '../../gitops/names.ts';
import { type TreeValidation, validateTree } from '../../gitops/validate-tree.ts';
import { defineCommand, TRANSACTION_DIRECTORY_FLAGS, UsageError } from '../command.ts';

export const VALIDATE_FLAGS = {
  output: {
    type: 'string',
    short: 'o',
    env: 'JANUS_OUTPUT',
    placeholder: 'json|yaml',
    description: 'also write the report to stdout in this format',
  },
  ...TRANSACTION_DIRECTORY_FLAGS,
} as const;

export default defineCommand({
  name: 'validate',
  usage: 'janus validate [dir] [flags]',
  description: `
Checks transaction directories with exactly the rules \`janus run\` applies when they land on the
watched branch, without a cluster. [dir] is a repository root (its transactions/ folder is
checked), the transactions folder itself, or one transaction directory; default ".".

Every problem is printed to stderr as "file:line:column: field: message", the form editors and
CI annotators understand. With -o json or -o yaml the full report also goes to stdout.

Exit status: 0 when every directory is valid, 1 when one is not (or there is nothing to
validate), 2 on a usage error.

Example, in CI:
  janus validate . --allowed-namespaces shop,payments`,
  flags: VALIDATE_FLAGS,
  async run(values, args) {
    if (args.length > 1) throw new UsageError(`expected at most one directory, got ${args.length}`);
    const format = values.output;
    if (format !== undefined && format !== 'json' && format !== 'yaml') {
      throw new UsageError(`-o/--output: expected json or yaml, got "${format}"`);
    }
    const target = args[0] ?? '.';
    const info = await stat(target).catch(() => undefined);
    if (!info?.isDirectory()) throw new UsageError(`${target}: no such directory`);
    const allowed = values['allowed-namespaces']
      ?.split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    for (const [flag, names] of [
      ['default-namespace', [values['default-namespace']]],
      ['allowed-namespaces', allowed ?? []],
    ] as const) {
      for (const name of names) {
        const problem = dnsLabelProblem(name);
        if (problem) throw new UsageError(`--${flag}: "${name}" ${problem}`);
      }
    }
    const report = await validateTree(target, {
      transactionsRoot: values.root,
      defaultNamespace: values['default-namespace'],
      ...(allowed && { allowedNamespaces: allowed }),
    });
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
