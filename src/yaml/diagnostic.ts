/**
 * A problem found in a transaction directory or in a YAML file read from Git, located as
 * precisely as the input allows, so a pull-request author can go straight to the line that needs
 * fixing. Here, beside the YAML parser, because the parser reports in it and the results branch
 * renders it; the codes name what the gitops rules check.
 */

export type DiagnosticCode =
  | 'yaml-syntax'
  /** Nested too deep, too many anchors or aliases, or aliases that expand too far (docs/git.md, Limits). */
  | 'yaml-too-complex'
  | 'not-a-mapping'
  | 'missing-field'
  | 'unknown-field'
  | 'invalid-value'
  | 'wrong-kind'
  | 'name-mismatch'
  | 'invalid-directory-name'
  | 'namespace-not-allowed'
  | 'service-account-not-allowed'
  | 'target-namespace-not-allowed'
  | 'duplicate-target'
  | 'unknown-file'
  | 'missing-transaction-file'
  | 'no-changes'
  | 'too-many-changes'
  | 'too-many-files'
  | 'file-too-large'
  | 'directory-too-large'
  | 'unreadable-file'
  /** --verify-signatures: a commit that changed the directory is not signed by an allowed signer. */
  | 'commit-signature'
  /** A SOPS-encrypted change file Janus cannot use (docs/operations.md, Encrypted Secrets). */
  | 'invalid-sops'
  /** A source's render failed: the tool's message, at the file and line it names (docs/sources.md). */
  | 'render-failed'
  /** A source rendered an object its repository's policy refuses, or more than its bounds allow. */
  | 'object-not-allowed';

export interface Diagnostic {
  code: DiagnosticCode;
  /** Repository-relative path of the file, or of the directory for directory-level problems. */
  file: string;
  /** 1-based index of the YAML document; set only for files holding several documents. */
  document?: number;
  /** 1-based line and column of the offending node. */
  line?: number;
  column?: number;
  /** The field at fault, e.g. `spec.changes[2].target.kind` or `metadata.name`. */
  field?: string;
  message: string;
}

/** `file:line:column: [document N] field: message`, the shape editors and CI annotators parse. */
export function formatDiagnostic(d: Diagnostic): string {
  let where = d.file;
  if (d.line !== undefined) where += `:${d.line}${d.column !== undefined ? `:${d.column}` : ''}`;
  const doc = d.document !== undefined ? ` (document ${d.document})` : '';
  const field = d.field !== undefined ? `${d.field}: ` : '';
  return `${where}${doc}: ${field}${d.message}`;
}

/** Stable order for reports: by file, then document, then position. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return (
    (a.document ?? 0) - (b.document ?? 0) ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0)
  );
}

/** Renders a field path such as ['spec', 'changes', 2, 'target'] as `spec.changes[2].target`. */
export function fieldPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}
