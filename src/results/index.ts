/** The results branch: rendering outcomes and writing them to Git. */
export {
  formatCommitMessage,
  parseTrailers,
  type ResultTrailers,
  TRAILER_PHASE,
  TRAILER_SOURCE,
  TRAILER_TRANSACTION,
} from './commit-message.ts';
export { commitRecords } from './commit-records.ts';
export {
  type DirectoryRef,
  PHASE_IGNORED,
  PHASE_REJECTED,
  renderIgnoredEdit,
  renderRejection,
} from './render-directory.ts';
export { type ChangeOutcome, changeOutcome, renderTransactionResult } from './render-transaction.ts';
export { type ResultContext, resultPath, sourceCommit, sourceOf } from './result-context.ts';
export type { ResultRecord } from './result-record.ts';
export { type AddOptions, ResultSpool, type SpoolEntry } from './spool.ts';
export {
  DEFAULT_RESULTS_BRANCH,
  type FlushReport,
  ResultsWriter,
  type ResultsWriterOptions,
} from './writer.ts';
