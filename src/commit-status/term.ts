/**
 * Commit statuses for one leadership term: the reporter, the listener the results reporter feeds
 * it through, and a hook for the result records the materializer writes (its rejection records
 * become failure statuses, spooled on disk until delivered). Off (nothing started, the sink unchanged) when no settings are given.
 */
import { join } from 'node:path';
import type { SecretSource } from '../git/auth.ts';
import type { Logger } from '../log/index.ts';
import type { CommitStatusResult } from '../metrics/labels.ts';
import type { TransactionListener } from '../results/reporter.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { forgeSender } from './client.ts';
import type { Forge } from './forge.ts';
import { commitStatusListener, rejectionStatusOf } from './listener.ts';
import { CommitStatusReporter } from './reporter.ts';
import { StatusSpool } from './spool.ts';
import { RECORD_PHASES } from './state.ts';

export interface CommitStatusSettings {
  forge: Forge;
  token: SecretSource;
  /** The status link; {namespace}, {name}, {sha}, {phase} and {path} are filled in. */
  targetUrl?: string | undefined;
}

export interface CommitStatusTerm {
  listeners: readonly TransactionListener[];
  /**
   * Called before a result record is queued: a rejection becomes a failure status, spooled first
   * (a rejected directory has no Transaction from which a new term could offer it again).
   */
  beforeResult(record: ResultRecord): Promise<void>;
  stop(): Promise<void>;
}

export async function startCommitStatuses(
  settings: CommitStatusSettings | undefined,
  o: {
    userAgent: string;
    log: Logger;
    onResult(provider: string, result: CommitStatusResult | undefined): void;
    /** Where statuses that must survive a crash wait (the repository's state folder). */
    stateDir: string;
  },
): Promise<CommitStatusTerm> {
  if (!settings) return { listeners: [], beforeResult: async () => {}, stop: async () => {} };
  const spool = await StatusSpool.open(join(o.stateDir, 'pending-statuses'));
  const provider = settings.forge.kind;
  o.onResult(provider, undefined);
  const reporter = new CommitStatusReporter({
    forge: settings.forge,
    send: forgeSender(settings.token, o.userAgent),
    log: o.log,
    onResult: (result) => o.onResult(provider, result),
    onDone: (status) => {
      if ((RECORD_PHASES as readonly string[]).includes(status.phase)) {
        spool.remove(status).catch((err: unknown) => o.log.warn({ err }, 'cannot remove a delivered status'));
      }
    },
  });
  for (const { key, status } of await spool.load()) reporter.offer(key, status);
  reporter.start();
  const template = { targetUrl: settings.targetUrl };
  return {
    listeners: [commitStatusListener(reporter, template)],
    async beforeResult(record) {
      const rejection = rejectionStatusOf(record, template);
      if (!rejection) return;
      await spool.add(rejection.key, rejection.status);
      reporter.offer(rejection.key, rejection.status);
    },
    stop: () => reporter.stop(),
  };
}
