/** Repository access over isomorphic-git: fetching, change detection, reading and writing trees. */
export {
  type CredentialsProvider,
  credentialsProvider,
  DEFAULT_TOKEN_USERNAME,
  describeSecretSource,
  type GitAuthConfig,
  GitCredentials,
  type SecretSource,
} from './auth.ts';
export {
  type ChangeOptions,
  type ChangeSet,
  type CommitChanges,
  type DirectoryChange,
  type DirectoryChangeKind,
  diffDirectories,
  type HistoryShape,
  listChanges,
} from './changes.ts';
export type { CommitInfo, Signature } from './commit-info.ts';
export {
  FetchDeadlineError,
  FetchTooLargeError,
  formatBytes,
  GitAccessError,
  type GitErrorKind,
  HttpTimeoutError,
  toGitAccessError,
} from './errors.ts';
export {
  createHttpClient,
  type HttpClientOptions,
  type HttpExchange,
  limitResponseBytes,
} from './http-client.ts';
export { describeLocation, parseRepositoryLocation, type RepositoryLocation, redactUrl } from './location.ts';
export { ObjectStore, ZERO_OID } from './object-store.ts';
export {
  DEFAULT_MAX_FETCH_BYTES,
  GitRepository,
  type GitSession,
  type RepositoryOptions,
} from './repository.ts';
export { type FileUpdates, writeFiles } from './tree-writer.ts';
