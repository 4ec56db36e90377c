/** `janus history [name]`: the outcomes on the results branch as a table, as `argocd app history`. */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { credentialsProvider, GitRepository } from '../../git/index.ts';
import { type History, readHistory } from '../../results/history.ts';
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

Exit status: 0 shown (also when nothing is recorded yet); 1 the repository could not be read;
2 usage error.

Examples:
  janus history
  janus history shop/deploy-v2
  janus history --repo https://github.com/org/deploys --limit 100 -o json`,
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
    const { history, read } = await repository.run(async (session) => {
      let tip = await session.fetch(branch);
      let read = branch;
      if (tip === undefined && repository.location.kind === 'local') {
        // A clone has the results branch as a remote-tracking branch unless someone checked it out.
        tip = await session.store.resolveRef(`refs/remotes/origin/${branch}`);
        read = `origin/${branch}`;
      }
      return { history: await readHistory(session, branch, tip, { transaction, limit }), read };
    });
    const { stdout, stderr } = processStreams();
    if (format) {
      stdout.write(
        formatDocument({ branch: read, tip: history.tip, entries: [...history.entries].reverse() }, format),
      );
      return 0;
    }
    stderr.write(renderHistory(history, read, repository.display, transaction));
    return 0;
  },
});

const HEADER = ['RECORDED', 'TRANSACTION', 'PHASE', 'DETAIL', 'SOURCE', 'RECORD'] as const;

function renderHistory(
  history: History,
  branch: string,
  repository: string,
  name: string | undefined,
): string {
  if (history.tip === undefined) return `No branch ${branch} in ${repository}: nothing recorded yet.\n`;
  if (history.entries.length === 0) {
    return `Nothing recorded on ${branch}${name ? ` for ${name}` : ''} in ${repository}.\n`;
  }
  const rows = [...history.entries]
    .reverse()
    .map((e) => [
      e.recordedAt.replace('T', ' ').replace('Z', ''),
      e.transaction,
      e.phase,
      truncate(e.detail ?? '', 40),
      e.source?.slice(0, 12) ?? '',
      e.record.slice(0, 12),
    ]);
  const more = history.more ? `(older entries not shown: --limit)\n` : '';
  return `${more}${renderTable(HEADER, rows)}`;
}
