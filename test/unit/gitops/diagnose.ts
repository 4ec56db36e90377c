/** Shared by the diagnostics tests: parse one directory held in memory and return its diagnostics. */
import { expect } from 'vitest';
import {
  type Diagnostic,
  memoryReader,
  type ParseOptions,
  type ParseResult,
  parseTransactionDirectory,
  repositoryPolicy,
} from '../../../src/gitops/index.ts';

export const OPTIONS: ParseOptions = {
  policy: repositoryPolicy({
    defaultNamespace: 'default',
    allowedNamespaces: 'default,other',
    allowedServiceAccounts: 'deploy-sa',
  }),
};

export const header = (name = 'deploy-v2', extra = '') => `apiVersion: tx.janus.io/v1alpha1
kind: Transaction
metadata:
  name: ${name}
${extra}spec:
  serviceAccountName: deploy-sa
`;
export const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n';

/** Parses the directory transactions/<dir> holding `files` (names within the directory). */
export function parseFiles(
  files: Record<string, string | Uint8Array>,
  options: ParseOptions = OPTIONS,
  dir = 'deploy-v2',
): Promise<ParseResult> {
  const path = `transactions/${dir}`;
  const prefixed = Object.fromEntries(Object.entries(files).map(([name, text]) => [`${path}/${name}`, text]));
  return parseTransactionDirectory(memoryReader(prefixed), path, options);
}

/** Parses transactions/<dir> and returns its diagnostics (failing if it parsed). */
export async function diagnose(
  files: Record<string, string | Uint8Array>,
  options: ParseOptions = OPTIONS,
  dir = 'deploy-v2',
): Promise<Diagnostic[]> {
  const result = await parseFiles(files, options, dir);
  if (result.ok) throw new Error('expected diagnostics, got a valid transaction');
  return result.diagnostics;
}

export const at = (file: string, fields: Partial<Diagnostic>) =>
  expect.objectContaining({ file: `transactions/deploy-v2/${file}`, ...fields });
