/**
 * Runs `janus controller` as a separate process, as the controller identity (bound only by the
 * RBAC in manifests/), so tests exercise exactly what ships — and can kill it for real.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type InstanceChoice, instanceArgs, instanceOf } from '../cluster/instance.ts';
import { type JanusProcess, spawnJanus } from './janus-process.ts';

export interface ControllerProcess extends JanusProcess {
  /** Its instance (--instance); undefined: the default installation. */
  readonly instance: string | undefined;
}

export interface ControllerProcessOptions {
  kubeconfig: string;
  /** Reconcile only this namespace (tests run side by side). */
  namespace?: string;
  /**
   * Its installation (test/support/cluster/instance.ts): by default one of its own, the instance
   * named after `namespace` (which saga.ts's transaction() labels the namespace's Transactions
   * with), or a fresh one without a namespace; null, the default installation.
   */
  instance?: InstanceChoice;
  /** The installation's namespace (its leader Lease, its claim); janus-system by default, as shipped. */
  controllerNamespace?: string;
  extraArgs?: string[];
  env?: Record<string, string>;
  /** Default debug: tests read the per-request log lines. */
  logLevel?: string;
  /**
   * The addresses metric analysis may query (JANUS_ANALYSIS_ALLOWED_ADDRESSES, as the manifests
   * set it); none by default, as shipped.
   */
  analysisAllowedAddresses?: readonly string[];
  /** Namespaces sharing AnalysisTemplates (JANUS_ANALYSIS_TEMPLATE_NAMESPACES); none by default. */
  analysisTemplateNamespaces?: readonly string[];
  /** Exactly these Node flags instead of the ones the launcher picks (benchmarks weighing them). */
  nodeFlags?: readonly string[];
  /** The checkout whose dist/ runs (a benchmark comparing two builds); default this one. */
  root?: string;
}

export async function startController(opts: ControllerProcessOptions): Promise<ControllerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-controller-'));
  const instance = instanceOf(opts.instance, opts.namespace);
  const spawned = spawnJanus(
    'controller',
    [
      '--kubeconfig',
      opts.kubeconfig,
      '--controller-namespace',
      opts.controllerNamespace ?? 'janus-system',
      '--log-level',
      opts.logLevel ?? 'debug',
      '--metrics-bind-address',
      '127.0.0.1:0',
      ...(opts.namespace ? ['--namespace', opts.namespace] : []),
      ...instanceArgs(instance, opts.env),
      ...(opts.extraArgs ?? ['--no-leader-elect']),
    ],
    {
      logFile: join(dir, 'controller.log'),
      env: { ...analysisSettings(opts), ...opts.env },
      nodeFlags: opts.nodeFlags,
      root: opts.root,
    },
  );
  return { ...spawned, instance };
}

function analysisSettings(opts: ControllerProcessOptions): Record<string, string> {
  return {
    ...(opts.analysisAllowedAddresses && {
      JANUS_ANALYSIS_ALLOWED_ADDRESSES: opts.analysisAllowedAddresses.join(','),
    }),
    ...(opts.analysisTemplateNamespaces && {
      JANUS_ANALYSIS_TEMPLATE_NAMESPACES: opts.analysisTemplateNamespaces.join(','),
    }),
  };
}

/** Runs `body` with a controller process, stopped afterwards whatever happens. */
export async function withController<T>(
  opts: ControllerProcessOptions,
  body: (controller: ControllerProcess) => Promise<T>,
): Promise<T> {
  const controller = await startController(opts);
  try {
    return await body(controller);
  } finally {
    await controller.stop();
  }
}
