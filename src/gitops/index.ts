/** Transaction directories as written in Git: parsing, validation, diagnostics. */
export {
  compareDiagnostics,
  type Diagnostic,
  type DiagnosticCode,
  formatDiagnostic,
} from '../yaml/diagnostic.ts';
export type { DirectoryEntry, DirectoryReader, EntryType, FileContent } from './directory-reader.ts';
export { joinPath, memoryReader } from './directory-reader.ts';
export { diskReader } from './disk-reader.ts';
export { classifyFile, ROLLBACK_FILE, TRANSACTION_FILE } from './file-names.ts';
export { type LoadedDirectory, type LoadedFile, loadDirectory } from './load-directory.ts';
export { DEFAULT_LIMITS, type ParseLimits, type ParseOptions, type SourceInfo } from './options.ts';
export {
  type ParseResult,
  parseLoadedDirectory,
  parseTransactionDirectory,
  type RollbackRequest,
} from './parse-directory.ts';
export {
  DEFAULT_CONTROLLER_NAMESPACE,
  describePolicy,
  formatGrant,
  namespaceRefusal,
  POLICY_SETTINGS,
  PolicyError,
  type PolicySettings,
  type RepositoryPolicy,
  rejectionNamespace,
  repositoryPolicy,
  reservedNamespaceReason,
  type ServiceAccountGrant,
  serviceAccountRefusal,
} from './policy.ts';
export { commitReader } from './tree-reader.ts';
export {
  DEFAULT_TRANSACTIONS_ROOT,
  type DirectoryValidation,
  type TreeValidation,
  type ValidateOptions,
  validateTree,
} from './validate-tree.ts';
