/**
 * The delivery ledger (ledger.ts) in a ConfigMap of the controller's namespace, one per
 * installation and watched namespace, so it survives a restart and a leader change. Loaded once
 * per leadership term before the first event is routed; written after deliveries, batched: one
 * write in flight at a time, carrying every delivery recorded since the last one. Writes are
 * conditional (the resourceVersion last seen); on a conflict the stored ledger is read, merged
 * and written again. A ledger that cannot be read or written costs only duplicates (the
 * at-least-once of before), never a lost notification.
 */
import { createHash } from 'node:crypto';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import { type Ledger, ledgerKey, mergeLedgers, parseLedger, prunedLedger, renderLedger } from './ledger.ts';

const DATA_KEY = 'delivered.json';
/** Tries of one write against conflicting writers before leaving it to the next delivery. */
const WRITE_ATTEMPTS = 3;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export interface LedgerStoreOptions {
  objects: Objects;
  namespace: string;
  instance?: string | undefined;
  watchNamespace?: string | undefined;
  /** Entries older than this are pruned (a replay never reaches them). */
  keepMs: number;
  log: Logger;
  clock?: () => Date;
}

/** `janus-notifications-<hash of instance and watched namespace>`: stable, valid, one per installation. */
export function ledgerConfigMapName(
  instance: string | undefined,
  watchNamespace: string | undefined,
): string {
  const hash = createHash('sha256')
    .update(`${instance ?? ''}\n${watchNamespace ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  return `janus-notifications-${hash}`;
}

export class LedgerStore {
  readonly name: string;
  readonly #o: LedgerStoreOptions;
  #ledger = new Map<string, number>();
  #resourceVersion: string | undefined;
  #loaded: Promise<void> | undefined;
  #dirty = false;
  #writing: Promise<void> | undefined;

  constructor(options: LedgerStoreOptions) {
    this.#o = options;
    this.name = ledgerConfigMapName(options.instance, options.watchNamespace);
  }

  /** Reads the stored ledger, once; a failure is logged and starts from an empty one. */
  load(): Promise<void> {
    this.#loaded ??= this.#read().then(
      (stored) => {
        this.#ledger = mergeLedgers(stored, this.#ledger);
      },
      (err: unknown) =>
        this.#o.log.warn(
          { err, configMap: this.name },
          'delivery ledger not read; a replay may repeat notifications',
        ),
    );
    return this.#loaded;
  }

  has(provider: string, event: string): boolean {
    return this.#ledger.has(ledgerKey(provider, event));
  }

  /** Records a delivery and schedules a write (batched with any other recorded meanwhile). */
  record(provider: string, event: string): void {
    this.#ledger.set(ledgerKey(provider, event), this.#now());
    this.#dirty = true;
    this.#writing ??= this.#flush();
  }

  /** Resolves when every recorded delivery has been written or given up (tests, a clean stop). */
  async idle(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #flush(): Promise<void> {
    try {
      await this.load();
      while (this.#dirty) {
        this.#dirty = false;
        await this.#write().catch((err: unknown) =>
          this.#o.log.warn(
            { err, configMap: this.name },
            'delivery ledger not written; a replay may repeat notifications',
          ),
        );
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.#ledger = prunedLedger(this.#ledger, this.#now(), this.#o.keepMs);
      const object: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: this.name,
          namespace: this.#o.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'janus', 'app.kubernetes.io/component': 'notifications' },
          ...(this.#resourceVersion ? { resourceVersion: this.#resourceVersion } : {}),
        },
        data: { [DATA_KEY]: renderLedger(this.#ledger) },
      };
      try {
        const saved = this.#resourceVersion
          ? await this.#o.objects.replace(object)
          : await this.#o.objects.create(object);
        this.#resourceVersion = saved.metadata.resourceVersion;
        return;
      } catch (error) {
        const raced = isConflict(error) || isAlreadyExists(error) || isNotFound(error);
        if (!raced || attempt >= WRITE_ATTEMPTS) throw error;
        this.#ledger = mergeLedgers(await this.#read(), this.#ledger);
      }
    }
  }

  async #read(): Promise<Ledger> {
    const found = await this.#o.objects.find<ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: this.name,
      namespace: this.#o.namespace,
    });
    this.#resourceVersion = found?.metadata.resourceVersion;
    return parseLedger(found?.data?.[DATA_KEY]);
  }

  #now(): number {
    return (this.#o.clock?.() ?? new Date()).getTime();
  }
}
