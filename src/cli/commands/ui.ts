/** `janus ui`: a web view of Transactions on 127.0.0.1, reading and acting as the person who runs it. */
import { DEFAULT_CONTROLLER_NAMESPACE } from '../../gitops/policy.ts';
import { CLUSTER_FLAGS, connect } from '../cluster.ts';
import { defineCommand, positiveInt, SETTINGS_FLAG, SOPS_KINDS_FLAG, UsageError } from '../command.ts';
import { sopsKinds } from '../controller-settings.ts';
import { onInterrupt } from '../interrupt.ts';
import { processStreams } from '../output.ts';
import { allowedSigners, CACHE_DIR_FLAG, RESULTS_BRANCH_FLAG } from '../results-history.ts';
import { GIT_ACCESS_FLAGS } from '../run-settings.ts';
import { initialScope, openBrowser, serveUi } from '../ui-session.ts';

export const UI_FLAGS = {
  ...CLUSTER_FLAGS,
  'all-namespaces': {
    type: 'boolean',
    short: 'A',
    env: 'JANUS_ALL_NAMESPACES',
    description: 'open on every namespace (the default when you may list Transactions cluster-wide)',
  },
  port: {
    type: 'string',
    env: 'JANUS_UI_PORT',
    default: '0',
    placeholder: 'port',
    description: 'the port on 127.0.0.1 (default: a free one, chosen at random)',
  },
  'no-open': {
    type: 'boolean',
    env: 'JANUS_UI_NO_OPEN',
    description: 'only print the URL; do not open a browser',
  },
  'controller-namespace': {
    type: 'string',
    env: 'JANUS_CONTROLLER_NAMESPACE',
    default: DEFAULT_CONTROLLER_NAMESPACE,
    placeholder: 'namespace',
    description: 'where janus run runs: its Git sides (suspend, resume) and its repository',
  },
  repo: {
    type: 'string',
    env: 'JANUS_REPO',
    placeholder: 'url|path',
    description: "the results branch's repository (default: the repository of janus run's Git side)",
  },
  ...RESULTS_BRANCH_FLAG,
  'allowed-signers-file': {
    type: 'string',
    env: 'JANUS_RESULTS_ALLOWED_SIGNERS_FILE',
    placeholder: 'path',
    description: "git's allowed-signers file: the history page then shows each record's signature state",
  },
  ...GIT_ACCESS_FLAGS,
  ...CACHE_DIR_FLAG,
  // janus run's --sops-kinds (or its settings file): the kinds besides Secret whose diffs are masked.
  ...SOPS_KINDS_FLAG,
  ...SETTINGS_FLAG,
} as const;

export default defineCommand({
  name: 'ui',
  usage: 'janus ui [flags]',
  description: `
Serves a web view of Transactions on 127.0.0.1 and prints its URL (and opens it, where a browser
can be started): every Transaction with its phase, live as the API server reports changes (a
watch, not polling), filtered by namespace and phase; one Transaction with its changes in order,
what each set and what its undo restores (a diff), its locks and their holders, the health gate
and the bake window, analysis measurements, the timeline of its phases and Events, and its
record on the results branch; a namespace's history from the results branch; the Git side of
janus run, with suspend and resume; Sources, where the cluster serves them.

A diff masks the content of a Secret (its values) and of the kinds janus run's --sops-kinds
allows (all but apiVersion, kind and metadata) on both sides, and never tells a changed value
from a kept one; give janus ui the same --sops-kinds, or janus run's settings file (--settings).

Every read and every action (rollback, cancel, retry-rollback, suspend, resume; each confirmed
first) is a request of your own kubeconfig's user, exactly as the CLI's: RBAC decides, and a
refusal shows the API server's message. The server listens on 127.0.0.1 only, on a random port,
and answers only the browser that opened the URL it prints (a secret made at each start, traded
for a cookie): another user of the machine, or another web page, cannot use it.

It is not meant to run inside the cluster: there it would act as its own ServiceAccount, not as
each person (docs/ui.md).

Exit status: 0 stopped with Ctrl-C; 1 the cluster could not be reached; 2 usage error.

Examples:
  janus ui
  janus ui -n shop --no-open
  janus ui --repo https://github.com/org/deploys --allowed-signers-file janus-results.allowed_signers`,
  flags: UI_FLAGS,
  async run(values, args) {
    if (args.length > 0) throw new UsageError(`janus ui takes no arguments, got "${args.join(' ')}"`);
    const port = values.port === '0' ? 0 : positiveInt(values.port, 'port');
    if (port > 65535) throw new UsageError(`--port: ${port} is not a port`);
    const kinds = sopsKinds(values['sops-kinds']);
    const allowed = values['allowed-signers-file']
      ? await allowedSigners(true, values['allowed-signers-file'])
      : undefined;
    const { stdout, stderr } = processStreams();
    const cluster = await connect(values, 'ui');
    const interrupt = onInterrupt();
    try {
      const scope = await initialScope(cluster, values);
      const { server, user } = await serveUi(cluster, { ...values, scope, port, allowed, sopsKinds: kinds });
      stdout.write(`${server.url}\n`);
      stderr.write(
        `janus ui is serving ${scope ? `namespace ${scope}` : 'every namespace'} as ${user ?? 'your kubeconfig user'} on 127.0.0.1:${server.port} (Ctrl-C to stop)\n`,
      );
      if (!values['no-open']) openBrowser(server.url);
      await new Promise<void>((resolve) => interrupt.signal.addEventListener('abort', () => resolve()));
      await server.close();
      return 0;
    } finally {
      interrupt.dispose();
      await cluster.close();
    }
  },
});
