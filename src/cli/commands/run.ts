/**
 * `janus run`: the main job. The saga controller, the Git poller and materializer, and the
 * results reporter, all under one leader election: only the leader polls, materializes,
 * reconciles and writes results. The operations server (metrics, probes, webhook) runs on every
 * replica; a webhook reaching a standby is acknowledged and does nothing.
 */
import { readFile } from 'node:fs/promises';
import type { SecretSource } from '../../git/index.ts';
import { runManager } from '../../manager/manager.ts';
import { defineCommand, UsageError } from '../command.ts';
import { managerOptions } from '../controller-settings.ts';
import { parseBindAddress } from '../ops-flags.ts';
import { renderSettings } from '../render-settings.ts';
import { gitSettings, RUN_FLAGS } from '../run-settings.ts';

export default defineCommand({
  name: 'run',
  usage: 'janus run --repo <https-url|path> [flags]',
  description: `
Watches a branch of a Git repository for transaction directories (transactions/<name>/), turns
each new one into a Transaction exactly once, drives it as a saga, and commits every outcome to
the results branch, so that \`git log janus/results\` is the audit trail. See docs/git.md.

A repository may use only what its policy grants: the namespaces of --allowed-namespaces (unset:
--default-namespace alone) and the ServiceAccounts of --allowed-service-accounts (unset: none, so
every directory is refused until one is named). The controller's namespace and kube-* never. A
directory that uses anything else is refused and reported on the results branch, file and line.

A webhook from the Git host (POST /webhook on the operations server, or on a listener of its
own with --webhook-bind-address; see docs/webhooks.md) triggers an immediate poll, and so does
janus poll; polling continues regardless. janus suspend stops it until janus resume. With more
than one replica, leader election keeps exactly one active.

Finished Transactions are pruned by the retention policy (--retain-last, --retain-min-age,
--rollback-window; docs/operations.md, Retention), one from Git only once its outcome is on the
results branch, which stays the permanent record (janus history).

Several installations in one cluster: each started with its own --instance handles only the
Transactions labelled tx.janus.io/instance=<instance> (the one without: those without the label),
labels those it creates from Git so, and leads under a Lease and keeps a Git cursor of its own;
see docs/operations.md, Several installations.

What a repository can cost is bounded: one fetch (--max-fetch-bytes), each file (1 MiB, checked
before it is inflated), the YAML in it (nesting, aliases, errors), each tree (--max-tree-bytes,
checked before it is parsed), and what one poll reads (--max-poll-directories, --max-poll-bytes;
later commits wait for the next poll); see docs/git.md, Limits.
Credentials are never sent over plain http:// unless --allow-insecure-http says so.

Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 on a usage error.`,
  flags: RUN_FLAGS,
  async run(values) {
    const { webhookSecret, webhookBindAddress, sourcesRoot, ...settings } = gitSettings(values);
    const options = managerOptions(values, 'janus');
    const render = renderSettings(values);
    const secret = webhookSecret && (await readWebhookSecret(webhookSecret));
    await runManager({
      ...options,
      git: {
        ...settings,
        sources: { root: sourcesRoot, ...render },
        pollInterval: values['poll-interval'],
        webhook:
          secret === undefined
            ? undefined
            : {
                secret,
                address:
                  webhookBindAddress === undefined
                    ? undefined
                    : parseBindAddress(webhookBindAddress, 'webhook-bind-address'),
              },
      },
    });
    return 0;
  },
});

async function readWebhookSecret(source: SecretSource): Promise<string> {
  let value: string | undefined;
  if ('file' in source) {
    try {
      value = await readFile(source.file, 'utf8');
    } catch (e) {
      throw new UsageError(
        `--webhook-secret-file: cannot read ${source.file} (${(e as NodeJS.ErrnoException).code ?? e})`,
      );
    }
  } else value = process.env[source.env];
  const secret = value?.replace(/\r?\n$/, '') ?? '';
  if (secret === '')
    throw new UsageError(`the webhook secret in ${'file' in source ? source.file : source.env} is empty`);
  return secret;
}
