/** `janus history [name]`: the outcomes on the results branch as a table, as `argocd app history`. */

import type { BranchAudit } from '../../results/branch-audit.ts';
import { defineCommand, positiveInt, UsageError } from '../command.ts';
import { historyDetail, historyDocumentEntry } from '../history-view.ts';
import { formatDocument, OUTPUT_FLAG, parseOutput, processStreams } from '../output.ts';
import {
  allowedSigners,
  CACHE_DIR_FLAG,
  RESULTS_BRANCH_FLAG,
  readResultsHistory,
  type VerifiedHistory,
} from '../results-history.ts';
import { GIT_ACCESS_FLAGS } from '../run-settings.ts';
import { renderTable, truncate } from '../table.ts';

export default defineCommand({
  name: 'history',
  usage: 'janus history [[namespace/]name] [flags]',
  description: `
Lists the outcomes recorded on the results branch, newest last (as argocd app history): when,
which transaction, its phase, the detail of the commit subject (e.g. 3/3 changes), the source
commit on the watched branch, and the results-branch commit that records it (git show it for the
whole result file). With a name, only that transaction (<name> in any namespace, or
<namespace>/<name>). With --source, only the records of that source's commits (docs/sources.md:
its transactions, and the commits it rendered that became none: RenderFailed, Refused,
Superseded) and of its drift corrections (<source>-drift-<n>, their DETAIL starting "drift
correction"; SOURCE is then the commit whose render they put back). It reads Git only, not the
cluster: the record outlives every Transaction.

--repo is a local clone (default: the current directory) or the repository's https:// URL (with
--git-token-file or JANUS_GIT_TOKEN when it needs credentials). In a clone, the local branch
janus/results is read, else origin/janus/results: git fetch origin janus/results first for the
latest.

With --verify, every commit of the results branch (reachable from its tip through every parent,
records or not) is checked against --allowed-signers-file (git's format, holding the public key
janus run signs results with: docs/operations.md, "Signed results"), as git verify-commit does.
Each record shown is marked verified, unsigned, bad signature (forged, tampered, or not an SSH
signature Janus can check) or unknown key (signed by a key the file does not allow); below the
table, how many commits were checked and each one that is not verified, by its hash. A commit
that is not a record (no trailers) counts as much as one that is: Janus's next record is made on
top of it and carries its files. --verify-after <commit> checks only the commits after that one
(as git log <commit>..), for a branch whose older records predate signing.

Exit status: 0 shown (also when nothing is recorded yet), with --verify every commit verified;
1 the repository could not be read; 2 usage error; 3 with --verify, a commit is not verified (or
the branch is longer than 100,000 commits past --verify-after).

Examples:
  janus history
  janus history shop/deploy-v2
  janus history --source shop/shop
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
    ...RESULTS_BRANCH_FLAG,
    source: {
      type: 'string',
      env: 'JANUS_HISTORY_SOURCE',
      placeholder: '[namespace/]name',
      description: "only the records of this source's commits and drift corrections",
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
    'verify-after': {
      type: 'string',
      env: 'JANUS_HISTORY_VERIFY_AFTER',
      placeholder: 'commit',
      description:
        'with --verify, check only the commits after this one (its hash, or a prefix of 7 or more hex digits)',
    },
    'allowed-signers-file': {
      type: 'string',
      env: 'JANUS_RESULTS_ALLOWED_SIGNERS_FILE',
      placeholder: 'path',
      description: "git's allowed-signers file holding the key results are signed with; needs --verify",
    },
    ...GIT_ACCESS_FLAGS,
    ...CACHE_DIR_FLAG,
    ...OUTPUT_FLAG,
  },
  async run(values, args) {
    if (args.length > 1) throw new UsageError(`expected at most one transaction name, got ${args.length}`);
    const transaction = args[0];
    const limit = positiveInt(values.limit, 'limit');
    const format = parseOutput(values.output, ['json', 'yaml'] as const);
    const allowed = await allowedSigners(values.verify, values['allowed-signers-file']);
    const after = verifyAfter(values.verify, values['verify-after']);
    const { history, read, display } = await readResultsHistory(values, {
      transaction,
      source: values.source,
      limit,
      allowed,
      audit: { after },
    });
    const { stdout, stderr } = processStreams();
    if (format) {
      const { audit } = history;
      stdout.write(
        formatDocument(
          {
            branch: read,
            tip: history.tip,
            entries: [...history.entries].reverse().map(historyDocumentEntry),
            ...(audit && { audit }),
          },
          format,
        ),
      );
    } else stderr.write(renderHistory(history, read, display, transaction));
    const unverified = history.entries.some((e) => e.signature && e.signature.status !== 'verified');
    const { audit } = history;
    return unverified || (audit && (audit.unverifiedCount > 0 || audit.incomplete)) ? 3 : 0;
  },
});

/** --verify-after's commit, lowercased; refused without --verify or when it is not a hex id. */
function verifyAfter(verify: boolean, commit: string | undefined): string | undefined {
  if (commit === undefined || commit === '') return undefined;
  if (!verify) throw new UsageError('--verify-after takes effect only with --verify');
  if (!/^[0-9a-f]{7,64}$/i.test(commit))
    throw new UsageError(`--verify-after: expected a commit hash (7 to 64 hex digits), got "${commit}"`);
  return commit.toLowerCase();
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
      truncate(historyDetail(e), 40),
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
  return `${more}${renderTable(header, rows)}${why.join('')}${history.audit ? renderAudit(history.audit) : ''}`;
}

/** What the walk of the whole branch found: every commit, records or not. */
function renderAudit(audit: BranchAudit): string {
  const checked = `${audit.checked.toLocaleString('en-US')} ${audit.checked === 1 ? 'commit' : 'commits'}`;
  const lines: string[] = [];
  if (audit.unverifiedCount === 0) lines.push(`Branch: ${checked} checked, every one verified.`);
  else {
    lines.push(
      `Branch: ${checked} checked, ${audit.unverifiedCount.toLocaleString('en-US')} not verified; the first, from the tip: ${audit.unverified[0]?.commit}`,
    );
    for (const u of audit.unverified)
      lines.push(`  ${u.commit} ${u.signature.status}: ${u.signature.detail}`);
    const more = audit.unverifiedCount - audit.unverified.length;
    if (more > 0) lines.push(`  … and ${more.toLocaleString('en-US')} more`);
  }
  if (audit.incomplete) lines.push(`Not checked to the end: ${audit.incomplete}.`);
  if (audit.afterNotFound)
    lines.push('--verify-after: that commit is not on the branch; every commit was checked.');
  return `${lines.join('\n')}\n`;
}
