/** What the demo shows while it runs: each Transaction's phases as they happen, and the shop's state. */
import type { Transaction } from '../../api/v1alpha1/index.ts';
import type { KubeObject, Objects } from '../../kube/resources.ts';
import { observeTransactions } from '../transactions.ts';
import type { Narrator } from './progress.ts';

const TERMINAL = new Set(['Committed', 'RolledBack', 'Failed']);

function phaseLine(txn: Transaction): string {
  const phase = txn.status?.phase ?? 'Pending';
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const condition = txn.status?.conditions?.find((c) =>
    phase === 'Failed'
      ? c.type === 'Stalled'
      : TERMINAL.has(phase)
        ? c.type === 'Ready'
        : c.type === 'Reconciling',
  );
  const why = condition?.message ? ` — ${condition.message}` : '';
  return `${id.padEnd(22)} ${phase.padEnd(11)}${why}`.trimEnd();
}

/** Narrates phase changes; remembers what it showed, so a later wait shows only what is new. */
export class PhaseFollower {
  readonly #shown = new Map<string, string>();
  readonly #objects: Objects;
  readonly #namespace: string;
  readonly #narrator: Narrator;

  constructor(objects: Objects, namespace: string, narrator: Narrator) {
    this.#objects = objects;
    this.#namespace = namespace;
    this.#narrator = narrator;
  }

  /**
   * Shows each new phase in the namespace until `done` holds for its Transactions. `signal` ends
   * the wait early (Ctrl-C, the main job exiting, the time limit).
   */
  async until(done: (txns: readonly Transaction[]) => boolean, signal: AbortSignal): Promise<void> {
    for await (const txns of observeTransactions(
      this.#objects.client,
      { namespace: this.#namespace },
      signal,
    )) {
      for (const txn of txns) {
        // Once per phase: the message alone may change often (e.g. while waiting for a lock).
        const phase = txn.status?.phase ?? 'Pending';
        if (this.#shown.get(txn.metadata.name) !== phase) this.#narrator.detail(phaseLine(txn));
        this.#shown.set(txn.metadata.name, phase);
      }
      if (done(txns)) return;
    }
    signal.throwIfAborted();
    throw new Error('stopped watching Transactions');
  }
}

export const phaseIs = (txns: readonly Transaction[], name: string, phase: string) =>
  txns.some((t) => t.metadata.name === name && t.status?.phase === phase);

interface PodView {
  metadata: KubeObject['metadata'];
  spec?: { containers?: { image?: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** "web pods: 2 ready running podinfo:6.7.0; 1 not ready running podinfo:6.7.1", during a rollout. */
export async function describeRollout(objects: Objects): Promise<string> {
  const list = await objects.list('v1', 'Pod', 'shop', { labelSelector: 'app=web' });
  const groups = new Map<string, number>();
  for (const pod of list.items as PodView[]) {
    if (pod.metadata.deletionTimestamp) continue;
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    const image = pod.spec?.containers?.[0]?.image?.split('/').pop() ?? '?';
    const key = `${ready ? 'ready' : 'not ready'}, image ${image}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const parts = [...groups.entries()]
    .sort()
    .reverse()
    .map(([key, n]) => `${n} ${key}`);
  return `web pods: ${parts.join('; ') || 'none'}`;
}

/** " (2/2 replicas ready)": what the Deployment's controller reports. */
function replicas(web: (KubeObject & Record<string, unknown>) | undefined): string {
  const status = web?.status as { readyReplicas?: number; replicas?: number } | undefined;
  const spec = web?.spec as { replicas?: number } | undefined;
  return status ? ` (${status.readyReplicas ?? 0}/${spec?.replicas ?? 1} replicas ready)` : '';
}

/** A few plain-language facts about the example shop, to see what each transaction did. */
export async function describeShop(objects: Objects): Promise<string[]> {
  const get = (apiVersion: string, kind: string, name: string) =>
    objects.find<KubeObject & Record<string, unknown>>({ apiVersion, kind, name, namespace: 'shop' });
  const [web, config, storefront, checkout, admin] = await Promise.all([
    get('apps/v1', 'Deployment', 'web'),
    get('v1', 'ConfigMap', 'app-config'),
    get('v1', 'ConfigMap', 'storefront'),
    get('v1', 'Service', 'checkout'),
    get('v1', 'Service', 'checkout-admin'),
  ]);
  const image = (web?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)
    ?.template?.spec?.containers?.[0]?.image;
  const data = (o: KubeObject | undefined) => (o?.data ?? {}) as Record<string, string>;
  const exists = (o: KubeObject | undefined) => (o ? 'exists' : 'does not exist');
  return [
    `Deployment web runs image ${image ?? '(none)'}${replicas(web)}`,
    `ConfigMap app-config: FEATURE_CHECKOUT_V2=${data(config).FEATURE_CHECKOUT_V2}, API_TIMEOUT=${data(config).API_TIMEOUT}`,
    `ConfigMap storefront: checkout_url=${data(storefront).checkout_url}`,
    `Service checkout ${exists(checkout)}; Service checkout-admin ${exists(admin)}`,
  ];
}
