/**
 * Commit statuses for one leadership term: the reporter, the listener the results reporter feeds
 * it through, and a hook for the result records the materializer writes (its rejection records
 * become failure statuses). Off (nothing started, the sink unchanged) when no settings are given.
 */
import type { SecretSource } from '../git/auth.ts';
import type { Logger } from '../log/index.ts';
import type { CommitStatusResult } from '../metrics/labels.ts';
import type { TransactionListener } from '../results/reporter.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { forgeSender } from './client.ts';
import type { Forge } from './forge.ts';
import { commitStatusListener, rejectionStatusOf } from './listener.ts';
import { CommitStatusReporter } from './reporter.ts';

export interface CommitStatusSettings {
  forge: Forge;
  token: SecretSource;
  /** The status link; {namespace}, {name}, {sha}, {phase} and {path} are filled in. */
  targetUrl?: string | undefined;
}

export interface CommitStatusTerm {
  listeners: readonly TransactionListener[];
  /** Called once a result record is durably queued: a rejection becomes a failure status. */
  resultWritten(record: ResultRecord): void;
  stop(): Promise<void>;
}

export function startCommitStatuses(
  settings: CommitStatusSettings | undefined,
  o: {
    userAgent: string;
    log: Logger;
    onResult(provider: string, result: CommitStatusResult | undefined): void;
  },
): CommitStatusTerm {
  if (!settings) return { listeners: [], resultWritten: () => {}, stop: async () => {} };
  const provider = settings.forge.kind;
  o.onResult(provider, undefined);
  const reporter = new CommitStatusReporter({
    forge: settings.forge,
    send: forgeSender(settings.token, o.userAgent),
    log: o.log,
    onResult: (result) => o.onResult(provider, result),
  });
  reporter.start();
  const template = { targetUrl: settings.targetUrl };
  return {
    listeners: [commitStatusListener(reporter, template)],
    resultWritten(record) {
      const rejection = rejectionStatusOf(record, template);
      if (rejection) reporter.offer(rejection.key, rejection.status);
    },
    stop: () => reporter.stop(),
  };
}
