/** `janus history [name]`: the outcomes on the results branch as a table, as `argocd app history`. */

import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type AllowedSigners, parseAllowedSigners } from '../../git/allowed-signers.ts';
import { MAX_ALLOWED_SIGNERS_BYTES } from '../../git/allowed-signers-file.ts';
import { credentialsProvider, GitRepository } from '../../git/index.ts';
import type { GitSession } from '../../git/repository.ts';
import { type History, type HistoryEntry, readHistory } from '../../results/history.ts';
import { type RecordSignature, verifyRecord } from '../../results/record-signature.ts';
import { defineCommand, positiveInt, UsageError } from '../command.ts';
import { formatDocument, OUTPUT_FLAG, parseOutput, processStreams } from '../output.ts';
import { GIT_ACCESS_FLAGS, gitAccessSettings } from '../run-settings.ts';
import { renderTable, truncate } from '../table.ts';

export default defineCommand({
  name: 'history',
  usage: 'janus history [[namespace/]name] [flags]',
  description: `
Lists the outcomes recorded on the results branch, newest last (as argocd app history): when,
which transaction, its phase, the detail of the commit subject (e.g. 3/3 changes), the source
commit on the watched branch, and the results-branch commit that records it (git show it for the
whole result file). With a name, only that transaction (<name> in any namespace, or
<namespace>/<name>). It reads Git only, not the cluster: the record outlives every Transaction.

--repo is a local clone (default: the current directory) or the repository's https:// URL (with
--git-token-file or JANUS_GIT_TOKEN when it needs credentials). In a clone, the local branch
janus/results is read, else origin/janus/results: git fetch origin janus/results first for the
latest.

With --verify, each record's commit is checked against --allowed-signers-file (git's format,
holding the public key janus run signs results with: docs/operations.md, "Signed results"), as
git verify-commit does, and marked verified, unsigned, bad signature (forged, tampered, or not an
SSH signature Janus can check) or unknown key (signed by a key the file does not allow).

Exit status: 0 shown (also when nothing is recorded yet), with --verify every record shown
verified; 1 the repository could not be read; 2 usage error; 3 with --verify, a record shown is
not verified.

Examples:
  janus history
  janus history shop/deploy-v2
  janus history --repo https://github.com/org/deploys --limit 100 -o json
  janus history --verify --allowed-signers-file janus-results.allowed_signers`,
  flags: {
    repo: {
      type: 'string',
      env: 'JANUS_REPO',
      default: '.',
      placeholder: 'url|path',
      description: 'the Git repository: a local clone, or an https:// URL',
    },
    'results-branch': {
      type: 'string',
      env: 'JANUS_RESULTS_BRANCH',
      default: 'janus/results',
      placeholder: 'name',
      description: 'the branch janus run commits outcomes to',
    },
    limit: {
      type: 'string',
      env: 'JANUS_HISTORY_LIMIT',
      default: '50',
      placeholder: 'n',
      description: 'show the newest n entries',
    },
    verify: {
      type: 'boolean',
      env: 'JANUS_HISTORY_VERIFY',
      description: 'check that each record is signed by a key of --allowed-signers-file (a SIGNATURE column)',
    },
    'allowed-signers-file': {
      type: 'string',
      env: 'JANUS_RESULTS_ALLOWED_SIGNERS_FILE',
      placeholder: 'path',
      description: "git's allowed-signers file holding the key results are signed with; needs --verify",
    },
    ...GIT_ACCESS_FLAGS,
    'cache-dir': {
      type: 'string',
      env: 'JANUS_CACHE_DIR',
      placeholder: 'path',
      description: 'where an https:// repository is fetched to (default ~/.cache/janus)',
    },
    ...OUTPUT_FLAG,
  },
  async run(values, args) {
    if (args.length > 1) throw new UsageError(`expected at most one transaction name, got ${args.length}`);
    const transaction = args[0];
    const limit = positiveInt(values.limit, 'limit');
    const format = parseOutput(values.output, ['json', 'yaml'] as const);
    const { credentials } = gitAccessSettings(values);
    const branch = values['results-branch'];
    const allowed = await allowedSigners(values.verify, values['allowed-signers-file']);
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
        const history = await readHistory(session, branch, tip, { transaction, limit });
        return { history: allowed ? await verified(session, history, allowed) : history, read };
      },
    );
    const unverified = history.entries.filter((e) => e.signature && e.signature.status !== 'verified');
    const { stdout, stderr } = processStreams();
    if (format) {
      stdout.write(
        formatDocument({ branch: read, tip: history.tip, entries: [...history.entries].reverse() }, format),
      );
    } else stderr.write(renderHistory(history, read, repository.display, transaction));
    return unverified.length > 0 ? 3 : 0;
  },
});

type VerifiedHistory = Omit<History, 'entries'> & {
  entries: (HistoryEntry & { signature?: RecordSignature })[];
};

/** The allowed signers of --verify; a file without --verify is refused, not ignored. */
async function allowedSigners(
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

const HEADER = ['RECORDED', 'TRANSACTION', 'PHASE', 'DETAIL', 'SOURCE', 'RECORD'] as const;

function renderHistory(
  history: VerifiedHistory,
  branch: string,
  repository: string,
  name: string | undefined,
): string {
  if (history.tip === undefined) return `No branch ${branch} in ${repository}: nothing recorded yet.\n`;
  if (history.entries.length === 0) {
    return `Nothing recorded on ${branch}${name ? ` for ${name}` : ''} in ${repository}.\n`;
  }
  const verify = history.entries.some((e) => e.signature);
  const rows = [...history.entries]
    .reverse()
    .map((e) => [
      e.recordedAt.replace('T', ' ').replace('Z', ''),
      e.transaction,
      e.phase,
      truncate(e.detail ?? '', 40),
      e.source?.slice(0, 12) ?? '',
      e.record.slice(0, 12),
      ...(verify ? [e.signature?.status ?? ''] : []),
    ]);
  const more = history.more ? `(older entries not shown: --limit)\n` : '';
  const header = verify ? [...HEADER, 'SIGNATURE'] : HEADER;
  const problems = history.entries.filter((e) => e.signature && e.signature.status !== 'verified');
  const why = problems.map(
    (e) => `${e.record.slice(0, 12)} ${e.signature?.status}: ${e.signature?.detail}\n`,
  );
  return `${more}${renderTable(header, rows)}${why.join('')}`;
}
