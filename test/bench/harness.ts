/**
 * What every benchmark needs: the test control plane, a counting proxy in front of it, admin
 * access, and controller processes (as the controller identity) that talk through the proxy.
 */
import { KubeClient } from '../../src/kube/client.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../../src/kube/resources.ts';
import { type CountingProxy, startApiProxy } from '../support/cluster/api-proxy.ts';
import type { InstanceChoice } from '../support/cluster/instance.ts';
import { ALL_ON_CONFIGMAPS, testNamespace } from '../support/cluster/saga.ts';
import { startTestEnvironment, type TestEnvironment } from '../support/cluster/test-env.ts';
import { buildDist } from '../support/processes/build.ts';
import { type ControllerProcess, startController } from '../support/processes/controller-process.ts';

export interface Bench {
  env: TestEnvironment;
  proxy: CountingProxy;
  admin: Objects;
  /** Kubeconfigs that go through the counting proxy. */
  proxied: { controller: string; admin: string };
  namespace(label: string): Promise<string>;
  /**
   * `janus controller` through the proxy; `root`: a checkout whose dist/ runs instead of this
   * one's; `env`: more of its environment; `instance`: test/support/cluster/instance.ts.
   */
  controller(
    namespace: string | undefined,
    extraArgs?: string[],
    more?: { root?: string | undefined; env?: Record<string, string>; instance?: InstanceChoice },
  ): Promise<ControllerProcess>;
  close(): Promise<void>;
}

export async function startBench(): Promise<Bench> {
  buildDist(); // controllers run the compiled entry point, as the image does
  const env = await startTestEnvironment();
  const client = await KubeClient.load({ kubeconfig: env.info.kubeconfigs.admin });
  const discovery = new Discovery(client);
  for (const m of CORE_MAPPINGS) discovery.seed(m);
  const admin = new Objects(client, discovery);
  const proxy = await startApiProxy(env.info.kubeconfigs.admin);
  const proxied = {
    controller: await proxy.proxied(env.info.kubeconfigs.controller, 'controller'),
    admin: await proxy.proxied(env.info.kubeconfigs.admin, 'admin'),
  };
  const controllers: ControllerProcess[] = [];
  return {
    env,
    proxy,
    admin,
    proxied,
    async namespace(label) {
      return testNamespace(admin, `bench-${label}`, { deployer: [ALL_ON_CONFIGMAPS] });
    },
    async controller(namespace, extraArgs = ['--no-leader-elect'], more = {}) {
      const c = await startController({
        kubeconfig: proxied.controller,
        ...(namespace && { namespace }),
        instance: more.instance,
        extraArgs,
        logLevel: 'info',
        ...(more.root && { root: more.root }),
        ...(more.env && { env: more.env }),
      });
      controllers.push(c);
      await c.opsUrl();
      return c;
    },
    async close() {
      await Promise.all(controllers.map((c) => c.stop()));
      await client.connection.close();
      await proxy.close();
      await env.stop();
    },
  };
}

/** A build a benchmark runs: this checkout's dist/, or another's. */
export interface Build {
  label: string;
  /** The checkout whose dist/ runs; undefined: this one. */
  root: string | undefined;
}

/**
 * The builds to compare: this one, and first the checkout JANUS_BENCH_BASELINE names (its dist/
 * built, its node_modules there) when set. A benchmark that supports it alternates their runs
 * over the same cluster: before and after a change, on the same machine at the same time.
 */
export function benchBuilds(): Build[] {
  const baseline = process.env.JANUS_BENCH_BASELINE;
  return [
    ...(baseline ? [{ label: 'baseline', root: baseline }] : []),
    { label: 'this build', root: undefined },
  ];
}

/**
 * Whether the process serving `opsUrl` answers /readyz with 200; false while it cannot answer
 * at all (a loaded machine resets a connection now and then: the poll asks again).
 */
export async function isReady(opsUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${opsUrl}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

/** Polls until `done` holds, returning how long it took in milliseconds. */
export async function timeUntil(
  done: () => Promise<boolean>,
  timeoutMs = 600_000,
  intervalMs = 5,
): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return performance.now() - started;
}
