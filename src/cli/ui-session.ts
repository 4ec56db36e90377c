/**
 * `janus ui`'s server with the CLI's own ways of doing things plugged in (ui/ does not import
 * cli/): the requests `janus rollback` and `janus cancel` send, the results branch as
 * `janus history` reads it. Used by `janus ui` and `janus demo --ui`.
 */
import { spawn } from 'node:child_process';
import type { RequestKind } from '../api/requests.ts';
import type { AllowedSigners } from '../git/allowed-signers.ts';
import { isForbidden } from '../kube/errors.ts';
import { transactionsPath } from '../kube/transactions.ts';
import { whoAmI } from '../kube/who-am-i.ts';
import { errorText } from '../log/describe-error.ts';
import { listGitSides } from '../ui/git-sides.ts';
import { historyView } from '../ui/history-view.ts';
import { startUiServer, type UiServer } from '../ui/server.ts';
import { CANCEL_REQUEST, ROLLBACK_REQUEST, sendRequest } from './annotation-request.ts';
import type { Cluster } from './cluster.ts';
import { UsageError } from './command.ts';
import { type ResultsSource, readResultsHistory } from './results-history.ts';

/** Most outcomes the history page reads back. */
const HISTORY_LIMIT = 200;

export interface UiSettings extends Omit<ResultsSource, 'repo'> {
  /** '' every namespace. */
  scope: string;
  port: number;
  context: string | undefined;
  'controller-namespace': string;
  /** The results branch's repository; default: the one janus run's Git side names. */
  repo: string | undefined;
  allowed: AllowedSigners | undefined;
  /** janus run's --sops-kinds, checked: kinds besides Secret whose content diffs mask. */
  sopsKinds: readonly string[];
}

/** Starts the server as the cluster connection's user; the caller closes it, then the connection. */
export async function serveUi(
  cluster: Cluster,
  settings: UiSettings,
): Promise<{ server: UiServer; user: string | undefined }> {
  const user = await whoAmI(cluster.client);
  const controllerNamespace = settings['controller-namespace'];
  const server = await startUiServer(
    {
      client: cluster.client,
      objects: cluster.objects,
      initialScope: settings.scope,
      controllerNamespace,
      sopsKinds: settings.sopsKinds,
      identity: { user, context: settings.context },
      request: (namespace, name, kind, reason) => sendAs(cluster, namespace, name, kind, reason),
      history: async (namespace) => {
        const repo = settings.repo ?? (await watchedRepository(cluster, controllerNamespace));
        const { history, display } = await readResultsHistory(
          { ...settings, repo },
          { namespace, limit: HISTORY_LIMIT, allowed: settings.allowed },
        );
        return historyView(display, settings['results-branch'], history, settings.allowed !== undefined);
      },
    },
    { port: settings.port },
  );
  return { server, user };
}

/** -A, -n, else every namespace if the user may list them all, else the context's namespace. */
export async function initialScope(
  cluster: Cluster,
  values: { 'all-namespaces': boolean; namespace: string | undefined },
): Promise<string> {
  if (values['all-namespaces']) return '';
  if (values.namespace) return values.namespace;
  try {
    await cluster.client.request({ method: 'GET', path: transactionsPath(undefined), query: { limit: 1 } });
    return '';
  } catch (e) {
    if (isForbidden(e)) return cluster.namespace;
    throw e;
  }
}

async function sendAs(
  cluster: Cluster,
  namespace: string,
  name: string,
  kind: RequestKind,
  reason: string | undefined,
): Promise<{ ok: boolean; message: string }> {
  // A retry of a rollback is what `janus rollback` sends on a Failed transaction.
  const request = kind === 'cancel' ? CANCEL_REQUEST : ROLLBACK_REQUEST;
  try {
    const { decision } = await sendRequest(cluster.client, request, namespace, name, {
      reason,
      via: 'janus ui',
    });
    return { ok: decision.kind !== 'refused', message: decision.message };
  } catch (e) {
    return { ok: false, message: errorText(e) };
  }
}

/** The repository janus run watches, from its Git side in the controller namespace. */
async function watchedRepository(cluster: Cluster, namespace: string): Promise<string> {
  const sides = await listGitSides(cluster.objects, namespace);
  const repositories = [...new Set(sides.map((s) => s.repository).filter(Boolean))];
  const [only, ...more] = repositories;
  if (only && more.length === 0) return only;
  throw new UsageError(
    only
      ? `janus run watches ${repositories.length} repositories in ${namespace}: start janus ui with --repo`
      : `no Git side of janus run in ${namespace}: start janus ui with --repo to read the results branch`,
  );
}

/** Opens `url` in the desktop's browser, where there is one; the URL is printed either way. */
export function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No browser here: the URL is on stdout.
  }
}
