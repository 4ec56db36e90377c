/**
 * The process git-poll.ts forks for each run: a real materializer and results writer over one
 * repository, polling when the parent asks, as a freshly (re)started `janus run` would.
 *
 *   node test/bench/git-poll-worker.ts <url> <cache dir> <cursor file> [allowed signers file]
 *
 * With an allowed-signers file, polls with --verify-signatures.
 *
 * Messages in: { poll: label } → replies a PollSample; { exit: true } → replies { peakRssMiB }
 * and exits. Sends { ready: true } once it can poll.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import type { TransactionApi } from '../../src/gitops/cluster-transactions.ts';
import type { PollSummary } from '../../src/gitops/materializer.ts';
import type { CursorStore, GitCursor } from '../../src/gitops/state.ts';

/**
 * The compiled modules (dist/, built by the benchmark that forks this worker), as janus run
 * loads them: through type stripping the same modules were about 30 MiB more resident.
 */
const dist = <T>(path: string): Promise<T> => import(new URL(`../../dist/${path}`, import.meta.url).href);
const { allowedSignersFile } = await dist<typeof import('../../src/git/allowed-signers-file.ts')>(
  'git/allowed-signers-file.js',
);
const { GitRepository } = await dist<typeof import('../../src/git/index.ts')>('git/index.js');
const { Materializer } =
  await dist<typeof import('../../src/gitops/materializer.ts')>('gitops/materializer.js');
const { repositoryPolicy } = await dist<typeof import('../../src/gitops/policy.ts')>('gitops/policy.js');
const { SignatureGate } =
  await dist<typeof import('../../src/gitops/signature-gate.ts')>('gitops/signature-gate.js');
const { UNSCOPED } =
  await dist<typeof import('../../src/gitops/signer-scopes.ts')>('gitops/signer-scopes.js');
const { silentLogger } = await dist<typeof import('../../src/log/index.ts')>('log/index.js');
const { renderMaterialized } =
  await dist<typeof import('../../src/results/reporter.ts')>('results/reporter.js');
const { ResultsWriter } = await dist<typeof import('../../src/results/writer.ts')>('results/writer.js');

export interface PollSample {
  label: string;
  ms: number;
  /** CPU time of this process during the poll: the wall time minus waiting for the server. */
  cpuMs: number;
  rssMiB: number;
  summary: PollSummary;
  /**
   * From the poll's start to the last Transaction created (fetch, read, parse, create, each
   * Materialized record spooled): what materializing took, before the results are committed and
   * pushed. Undefined when the poll created none.
   */
  materialized?: { ms: number; cpuMs: number } | undefined;
}

export type WorkerMessage = { poll: string } | { exit: true };

/** The cursor in a JSON file, so it survives from one worker process to the next. */
class FileCursorStore implements CursorStore {
  readonly #file: string;
  constructor(file: string) {
    this.#file = file;
  }
  async load(): Promise<GitCursor | undefined> {
    return readFile(this.#file, 'utf8').then(JSON.parse, () => undefined);
  }
  async save(cursor: GitCursor): Promise<void> {
    await writeFile(this.#file, JSON.stringify(cursor));
  }
}

/** When the last Transaction of the poll in progress was created, and the CPU used by then. */
type Created = { at: number; cpu: NodeJS.CpuUsage };
let lastCreated: Created | undefined;

/** Creating a Transaction costs one API request whatever the repository; here it costs nothing. */
const inMemoryCluster: TransactionApi = {
  async create(transaction: Transaction) {
    lastCreated = { at: performance.now(), cpu: process.cpuUsage() };
    return {
      kind: 'created',
      transaction: { ...transaction, metadata: { ...transaction.metadata, uid: 'bench' } },
    };
  },
  async requestRollback() {
    return { kind: 'requested' };
  },
};

async function worker(url: string, cacheDir: string, cursorFile: string, signers?: string): Promise<void> {
  const context = { controllerVersion: 'bench', identity: 'bench' };
  const repository = await GitRepository.open({ location: url, cacheDir });
  // The materializer flushes within each poll; the long batch delay keeps the writer from also
  // pushing on its own timer, so every push falls inside a measured poll.
  const writer = await ResultsWriter.open({ repository, batchDelayMs: 60_000 });
  const materializer = new Materializer({
    repository,
    branch: 'main',
    root: 'transactions',
    parse: { policy: repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'deployer' }) },
    initial: 'baseline',
    ...(signers && {
      signatures: new SignatureGate({ source: allowedSignersFile(signers), scopes: UNSCOPED }),
    }),
    cluster: inMemoryCluster,
    cursor: new FileCursorStore(cursorFile),
    results: writer,
    recordMaterialized: (txn) => writer.write(renderMaterialized(txn, context), { rederivable: true }),
    context,
    log: silentLogger(),
  });
  process.on('message', async (message: WorkerMessage) => {
    if ('exit' in message) {
      await writer.close();
      process.send?.({ peakRssMiB: process.resourceUsage().maxRSS / 1024 }, () => process.exit(0));
      return;
    }
    lastCreated = undefined;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const summary = await materializer.poll();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    // Set by create() while the poll ran (TypeScript cannot see that through the await).
    const created = lastCreated as Created | undefined;
    const sample: PollSample = {
      label: message.poll,
      ms,
      cpuMs: (used.user + used.system) / 1000,
      rssMiB: process.memoryUsage().rss / 2 ** 20,
      summary,
      materialized: created && {
        ms: created.at - started,
        cpuMs: (created.cpu.user + created.cpu.system - cpu.user - cpu.system) / 1000,
      },
    };
    process.send?.(sample);
  });
  process.send?.({ ready: true });
}

const [url, cacheDir, cursorFile, signers] = process.argv.slice(2);
if (!url || !cacheDir || !cursorFile)
  throw new Error('usage: git-poll-worker.ts <url> <cache dir> <cursor file>');
await worker(url, cacheDir, cursorFile, signers);
