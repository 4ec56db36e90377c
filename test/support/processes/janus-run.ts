/**
 * Runs `janus run` as a separate process, as the controller identity (bound only by the RBAC in
 * manifests/), against a real Git server: what ships, end to end, and killable for real.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type InstanceChoice, instanceArgs, instanceOf } from '../cluster/instance.ts';
import { type JanusProcess, spawnJanus } from './janus-process.ts';

export interface JanusRunOptions {
  kubeconfig: string;
  /** The repository URL or path (--repo). */
  repo: string;
  /** Reconcile and report only this namespace (tests run side by side). */
  namespace: string;
  /**
   * Its installation (test/support/cluster/instance.ts): by default one of its own, the instance
   * named after `namespace`; null, the default installation.
   */
  instance?: InstanceChoice;
  /** Reuse a cache directory (a restart); default: a fresh one. */
  cacheDir?: string;
  /** Default 1s. */
  pollInterval?: string;
  /**
   * --allowed-service-accounts: default "deployer" (what transaction-repo.ts directories run as);
   * '' leaves the flag out, the shipped default (no ServiceAccount). The allowed namespaces are
   * the default: `namespace` alone, unless `args` says otherwise.
   */
  serviceAccounts?: string;
  /** More flags, e.g. ['--initial', 'apply']. Leader election is off unless these turn it on. */
  args?: string[];
  env?: Record<string, string>;
  logLevel?: string;
  /** The checkout whose dist/ runs (a benchmark comparing two builds); default this one. */
  root?: string;
}

export interface JanusRunProcess extends JanusProcess {
  readonly cacheDir: string;
  /** Its instance (--instance); undefined: the default installation. */
  readonly instance: string | undefined;
}

export async function startJanusRun(opts: JanusRunOptions): Promise<JanusRunProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-run-'));
  const cacheDir = opts.cacheDir ?? join(dir, 'cache');
  const logFile = join(dir, 'janus.log');
  const instance = instanceOf(opts.instance, opts.namespace);
  const args = [
    '--kubeconfig',
    opts.kubeconfig,
    '--repo',
    opts.repo,
    '--namespace',
    opts.namespace,
    '--default-namespace',
    opts.namespace,
    ...instanceArgs(instance, opts.env),
    ...(opts.serviceAccounts === ''
      ? []
      : ['--allowed-service-accounts', opts.serviceAccounts ?? 'deployer']),
    '--controller-namespace',
    'janus-system',
    '--cache-dir',
    cacheDir,
    '--poll-interval',
    opts.pollInterval ?? '1s',
    '--log-level',
    opts.logLevel ?? 'debug',
    '--metrics-bind-address',
    '127.0.0.1:0',
    ...(opts.args?.some((a) => a.startsWith('--leader')) ? [] : ['--no-leader-elect']),
    ...(opts.args ?? []),
  ];
  return { ...spawnJanus('run', args, { logFile, env: opts.env, root: opts.root }), cacheDir, instance };
}
