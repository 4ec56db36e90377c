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
import { allowedSignersFile } from '../../src/git/allowed-signers-file.ts';
import { GitRepository } from '../../src/git/index.ts';
import type { TransactionApi } from '../../src/gitops/cluster-transactions.ts';
import { Materializer, type PollSummary } from '../../src/gitops/materializer.ts';
import { repositoryPolicy } from '../../src/gitops/policy.ts';
import { SignatureGate } from '../../src/gitops/signature-gate.ts';
import { UNSCOPED } from '../../src/gitops/signer-scopes.ts';
import type { CursorStore, GitCursor } from '../../src/gitops/state.ts';
import { silentLogger } from '../../src/log/index.ts';
import { renderMaterialized } from '../../src/results/reporter.ts';
import { ResultsWriter } from '../../src/results/writer.ts';

export interface PollSample {
  label: string;
  ms: number;
  /** CPU time of this process during the poll: the wall time minus waiting for the server. */
  cpuMs: number;
  rssMiB: number;
  summary: PollSummary;
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

/** Creating a Transaction costs one API request whatever the repository; here it costs nothing. */
const inMemoryCluster: TransactionApi = {
  async create(transaction: Transaction) {
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
    recordMaterialized: (txn) => writer.write(renderMaterialized(txn, context)),
    context,
    log: silentLogger(),
  });
  process.on('message', async (message: WorkerMessage) => {
    if ('exit' in message) {
      await writer.close();
      process.send?.({ peakRssMiB: process.resourceUsage().maxRSS / 1024 }, () => process.exit(0));
      return;
    }
    const started = performance.now();
    const cpu = process.cpuUsage();
    const summary = await materializer.poll();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const sample: PollSample = {
      label: message.poll,
      ms,
      cpuMs: (used.user + used.system) / 1000,
      rssMiB: process.memoryUsage().rss / 2 ** 20,
      summary,
    };
    process.send?.(sample);
  });
  process.send?.({ ready: true });
}

const [url, cacheDir, cursorFile, signers] = process.argv.slice(2);
if (!url || !cacheDir || !cursorFile)
  throw new Error('usage: git-poll-worker.ts <url> <cache dir> <cursor file>');
await worker(url, cacheDir, cursorFile, signers);
