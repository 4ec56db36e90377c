/**
 * The results branch read back: what `janus history` prints and the web view's history page
 * shows. From a local clone (its janus/results, else origin/janus/results) or an https:// URL,
 * with each record's signature checked when allowed signers are given.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type AllowedSigners, parseAllowedSigners } from '../git/allowed-signers.ts';
import { MAX_ALLOWED_SIGNERS_BYTES } from '../git/allowed-signers-file.ts';
import { credentialsProvider, GitRepository } from '../git/index.ts';
import type { GitSession } from '../git/repository.ts';
import { auditBranch, type BranchAudit } from '../results/branch-audit.ts';
import { type History, type HistoryEntry, readHistory } from '../results/history.ts';
import { type RecordSignature, verifyRecord } from '../results/record-signature.ts';
import { type Flags, UsageError } from './command.ts';
import { gitAccessSettings } from './run-settings.ts';

/** The results branch to read; `janus history` and `janus ui` take it alike. */
export const RESULTS_BRANCH_FLAG = {
  'results-branch': {
    type: 'string',
    env: 'JANUS_RESULTS_BRANCH',
    default: 'janus/results',
    placeholder: 'name',
    description: 'the branch janus run commits outcomes to',
  },
} as const satisfies Flags;

/** Where an https:// results repository is fetched to. */
export const CACHE_DIR_FLAG = {
  'cache-dir': {
    type: 'string',
    env: 'JANUS_CACHE_DIR',
    placeholder: 'path',
    description: 'where an https:// repository is fetched to (default ~/.cache/janus)',
  },
} as const satisfies Flags;

export type VerifiedHistory = Omit<History, 'entries'> & {
  entries: (HistoryEntry & { signature?: RecordSignature })[];
  /** With allowed signers and `audit`: every commit of the branch, records or not. */
  audit?: BranchAudit;
};

export interface ResultsSource {
  repo: string;
  'git-token-file': string | undefined;
  'git-username': string | undefined;
  'allow-insecure-http': boolean;
  'results-branch': string;
  'cache-dir': string | undefined;
}

export interface HistoryQuery {
  transaction?: string | undefined;
  namespace?: string | undefined;
  /** Only the records of this source's commits. */
  source?: string | undefined;
  limit: number;
  allowed: AllowedSigners | undefined;
  /** With `allowed`: also check every commit of the branch (from `after`, when given), as `janus history --verify`. */
  audit?: { after: string | undefined };
}

export async function readResultsHistory(
  values: ResultsSource,
  query: HistoryQuery,
): Promise<{ history: VerifiedHistory; read: string; display: string }> {
  const { credentials } = gitAccessSettings(values);
  const branch = values['results-branch'];
  const repository = await GitRepository.open({
    location: values.repo,
    cacheDir: values['cache-dir'] ?? join(homedir(), '.cache', 'janus'),
    ...(credentials && {
      credentials: credentialsProvider({
        secret: credentials,
        ...(values['git-username'] !== undefined && { username: values['git-username'] }),
      }),
    }),
  });
  const { history, read } = await repository.run(
    async (session): Promise<{ history: VerifiedHistory; read: string }> => {
      let tip = await session.fetch(branch);
      let read = branch;
      if (tip === undefined && repository.location.kind === 'local') {
        // A clone has the results branch as a remote-tracking branch unless someone checked it out.
        tip = await session.store.resolveRef(`refs/remotes/origin/${branch}`);
        read = `origin/${branch}`;
      }
      const history = await readHistory(session, branch, tip, query);
      const { allowed, audit } = query;
      if (!allowed) return { history, read };
      const audited =
        audit && tip !== undefined
          ? await auditBranch(session, branch, tip, allowed, { after: audit.after })
          : undefined;
      return {
        history: { ...(await verified(session, history, allowed)), ...(audited && { audit: audited }) },
        read,
      };
    },
  );
  return { history, read, display: repository.display };
}

/** The allowed signers of --verify; a file without --verify is refused, not ignored. */
export async function allowedSigners(
  verify: boolean,
  file: string | undefined,
): Promise<AllowedSigners | undefined> {
  if (!verify) {
    if (file) throw new UsageError('--allowed-signers-file takes effect only with --verify');
    return undefined;
  }
  if (!file)
    throw new UsageError('--verify needs --allowed-signers-file: the public key results are signed with');
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`--allowed-signers-file: cannot read ${file} (${error.code ?? 'error'})`);
  });
  if (Buffer.byteLength(text) > MAX_ALLOWED_SIGNERS_BYTES)
    throw new UsageError(`--allowed-signers-file: ${file} is larger than 1 MiB`);
  const signers = parseAllowedSigners(text);
  if (signers.signers.length === 0)
    throw new UsageError(
      `--allowed-signers-file: no usable key in ${file} (${signers.problems.join('; ') || 'empty'})`,
    );
  return signers;
}

async function verified(
  session: GitSession,
  history: History,
  allowed: AllowedSigners,
): Promise<VerifiedHistory> {
  const now = Date.now();
  const entries = [];
  for (const entry of history.entries)
    entries.push({ ...entry, signature: await verifyRecord(session.store, entry.record, allowed, now) });
  return { ...history, entries };
}
