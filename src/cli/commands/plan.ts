/**
 * `janus plan [dir]`: what the transactions of a directory, and with --base the transactions a pull
 * request's sources would make, would change in the cluster, as diffs.
 */

import type { ParseResult } from '../../gitops/index.ts';
import { whoAmI } from '../../kube/who-am-i.ts';
import { connect } from '../cluster.ts';
import {
  defineCommand,
  KUBE_FLAGS,
  POLICY_CONTROLLER_NAMESPACE_FLAG,
  policyFromFlags,
  SETTINGS_FLAG,
  TRANSACTION_DIRECTORY_FLAGS,
  UsageError,
} from '../command.ts';
import { formatDocument, outputFlag, parseOutput, processStreams } from '../output.ts';
import { type PlanOptions, planTransaction } from '../plan-changes.ts';
import {
  COMMENT_FAILED_EXIT,
  PLAN_COMMENT_FLAGS,
  planCommentTarget,
  postPlanComment,
} from '../plan-comment.ts';
import { planPullRequestSources } from '../plan-sources.ts';
import {
  invalidDirectory,
  PLAN_NOTE,
  planExitCode,
  renderDiffs,
  renderMarkdown,
  renderPlan,
  type TransactionPlan,
} from '../plan-view.ts';
import { RENDER_FLAGS, renderSettings } from '../render-settings.ts';
import { parseDirectories } from '../transaction-dirs.ts';

export default defineCommand({
  name: 'plan',
  usage: 'janus plan [dir] [flags]',
  description: `
Parses the transaction directories at dir (default "."): a transaction directory, a repository
root holding the transactions root folder, or that folder itself — exactly as janus run would.
For each change it reads the target and asks the API server for a server-side dry run of the
change (?dryRun=All: admission, validation, defaulting, RBAC, nothing persisted), then shows the
difference between the current object and the planned one as a unified diff of YAML, with
managedFields, resourceVersion and other server-set metadata left out. The content of a target
whose kind's content is secret (a Secret's values; all but apiVersion, kind and metadata of a
kind --sops-kinds lists) is masked as *** on both sides, SOPS-encrypted or not, in every format,
and never compared: such a target that exists is an update "(values not compared)", whether or
not a value would change, so a plan never tells whether a guessed value is the live one.
Each change is judged by the controller's own code: the same dry run (with the
tx.janus.io/applied-by annotation the commit adds, so admission and the annotation size limit
judge it; the diff does not show it) and the same refusals as its prepare step (TargetExists,
TargetNotFound, ReadFailed, DryRunFailed), in the words of the Transaction's status.

Directories are checked against the repository's policy exactly as janus run checks them (the
same --allowed-namespaces, --allowed-service-accounts and --default-namespace, or their JANUS_*
variables): without --allowed-service-accounts every directory is refused.

With --base <rev> (a full commit id or a ref of the local clone, e.g. origin/main), dir is the
repository's root and its sources (docs/sources.md) are planned too: each source declared at the
base or at --head (default HEAD) is rendered at both commits, from Git's object store, with the
sandbox, bounds and policy of janus run; each whose render the pull request changes is shown as
the transaction the merge would make (Source shop/web (sources/web.yaml), 3f2a9c1 → 9b8e7d6):
its applies dry-run as the source's ServiceAccount under the source's field manager, its prunes,
what it leaves in the cluster, or why nothing would be applied (a render failure with the tool's
file and line, a refused object, a rejected declaration). The clone must hold the base (CI:
fetch-depth 0). A source's SOPS files are decrypted at both commits as janus run decrypts them,
with the Secret janus-sops-age of its namespace read as the identity the plan runs as; its
Secrets are masked as above, and every decrypted value is replaced with (decrypted) in all the
plan prints of the source; a key that identity may not read fails the source's plan, naming the
Secret.

By default every read and dry run runs as the transaction's ServiceAccount (impersonation, as the
controller will: an RBAC gap shows up here); --no-as-service-account plans as yourself.
${PLAN_NOTE}

With --comment-on <number> (and -o markdown) the plan is also posted as a comment on that pull
or merge request; a later run updates that comment (found by a hidden marker naming dir) instead
of adding one. The forge, repository, API root and token default to what GitHub Actions, Gitea
Actions (GITHUB_REPOSITORY, GITHUB_API_URL) and GitLab CI (CI_PROJECT_ID, CI_API_V4_URL) set; the
token comes from --forge-token-file, JANUS_FORGE_TOKEN or GITHUB_TOKEN. A comment over the
forge's limit (GitHub 65,536 characters) is cut with a note; stdout always holds all of it.

Exit status: 0 nothing would change; 1 something would change; 2 a directory or a source's
declaration is invalid, a source's render fails or is refused, or a change would be refused (or
a usage error); 3 the comment could not be posted (the forge's
answer is printed).

Examples:
  janus plan transactions/deploy-v2 --allowed-namespaces shop --allowed-service-accounts deployer
  janus plan . -o markdown > plan.md        # a pull-request review comment
  janus plan . -o markdown --comment-on 42  # posted on pull request 42 (examples/ci)
  janus plan . --base origin/main -o markdown --comment-on 42  # sources too
  janus plan . -o diff > plan.diff
  janus plan --no-as-service-account -o json | jq '.[].changes[] | {target, action}'`,
  flags: {
    ...KUBE_FLAGS,
    ...TRANSACTION_DIRECTORY_FLAGS,
    ...SETTINGS_FLAG,
    ...POLICY_CONTROLLER_NAMESPACE_FLAG,
    ...RENDER_FLAGS,
    base: {
      type: 'string',
      env: 'JANUS_PLAN_BASE',
      placeholder: 'rev',
      description:
        "the pull request's base (a full commit id or a ref such as origin/main): plan the sources whose render changes from it to --head; dir must be the repository's root",
    },
    head: {
      type: 'string',
      env: 'JANUS_PLAN_HEAD',
      default: 'HEAD',
      placeholder: 'rev',
      description: "the pull request's head, with --base (a CI checkout of the merge result is HEAD)",
    },
    'as-service-account': {
      type: 'boolean',
      env: 'JANUS_PLAN_AS_SERVICE_ACCOUNT',
      default: true,
      description: "dry-run as each transaction's ServiceAccount (impersonation); on by default",
    },
    'no-as-service-account': { type: 'boolean', description: 'dry-run as yourself instead' },
    ...PLAN_COMMENT_FLAGS,
    ...outputFlag(
      ['json', 'yaml', 'diff', 'markdown'] as const,
      '; diff prints only the unified diffs, markdown a pull-request review comment',
    ),
  },
  async run(values, args) {
    const [target = '.', ...extra] = args;
    if (extra.length > 0) throw new UsageError(`expected at most one directory, got ${args.length}`);
    const format = parseOutput(values.output, ['json', 'yaml', 'diff', 'markdown'] as const);
    const commentTarget = planCommentTarget(values);
    const policy = policyFromFlags(values, values['controller-namespace']);
    const render = renderSettings(values);
    const base = values.base;
    const { stdout, stderr } = processStreams();
    const parsed = await parseDirectories(target, { policy, transactionsRoot: values.root }).catch(
      (error: unknown) => {
        // With --base the repository may hold sources only.
        if (base !== undefined && error instanceof UsageError) return [];
        throw error;
      },
    );
    if (parsed.length === 0 && base === undefined)
      stderr.write(`${target}: no transaction directory found\n`);
    const asServiceAccount = values['as-service-account'] && !values['no-as-service-account'];
    // Invalid directories are reported without a cluster; only valid ones and sources need one.
    const cluster =
      parsed.some((d) => d.ok) || base !== undefined
        ? await connect({ ...values, namespace: undefined }, 'plan')
        : undefined;
    const plans: TransactionPlan[] = [];
    const show = (plan: TransactionPlan) => {
      plans.push(plan);
      if (!format) stderr.write(renderPlan(plan));
    };
    try {
      const self = cluster && !asServiceAccount ? await whoAmI(cluster.client) : undefined;
      const options = cluster && {
        objects: cluster.objects,
        asServiceAccount,
        self,
        sopsKinds: policy.sopsKinds,
      };
      for (const dir of parsed) show(await planDirectory(dir, options));
      if (base !== undefined) {
        const sources = await planPullRequestSources({
          sources: { repository: target, base, head: values.head, root: values['sources-root'], policy },
          render,
          objects: cluster?.objects,
          plan: options,
        });
        for (const note of sources.notes) stderr.write(`${note}\n`);
        for (const plan of sources.plans) show(plan);
      }
    } finally {
      await cluster?.close();
    }
    if (format === 'diff') stdout.write(renderDiffs(plans));
    else if (format === 'markdown') stdout.write(renderMarkdown(plans));
    else if (format) stdout.write(formatDocument(plans, format));
    if (commentTarget) {
      try {
        stderr.write(`${await postPlanComment(commentTarget, target, renderMarkdown(plans))}\n`);
      } catch (error) {
        throw new UsageError(
          `cannot post the plan's comment: ${(error as Error).message}`,
          COMMENT_FAILED_EXIT,
        );
      }
    }
    return planExitCode(plans);
  },
});

function planDirectory(dir: ParseResult, options: PlanOptions | undefined): Promise<TransactionPlan> {
  return dir.ok && options
    ? planTransaction(dir.transaction, dir.path, options)
    : Promise.resolve(invalidDirectory(dir.path, dir.namespace, dir.name, dir.ok ? [] : dir.diagnostics));
}
