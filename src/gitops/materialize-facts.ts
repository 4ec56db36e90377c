/**
 * Reads what the materializer decides on, inside one repository operation: each changed
 * directory parsed at its commit, which of its files changed, and what the results branch
 * records about it. Only the directories Git reports as changed are read.
 */
import type { ChangeSet, DirectoryChange } from '../git/changes.ts';
import type { CommitInfo } from '../git/commit-info.ts';
import { GitObjectTooLargeError, readingCommit } from '../git/input-limits.ts';
import type { GitSession } from '../git/repository.ts';
import type { Logger } from '../log/index.ts';
import { PHASE_REJECTED } from '../results/render-directory.ts';
import type { RecordedOutcome, ResultsSnapshot } from '../results/results-reader.ts';
import { parseYamlValue } from '../yaml/yaml-file.ts';
import { type DirectoryReader, joinPath } from './directory-reader.ts';
import { ROLLBACK_FILE, TRANSACTION_FILE } from './file-names.ts';
import type { HeldTransaction } from './held-transaction.ts';
import { loadDirectory } from './load-directory.ts';
import { type DirectoryFacts, PHASE_BASELINE } from './materialize-decision.ts';
import { dnsLabelProblem } from './names.ts';
import { DEFAULT_LIMITS, type ParseOptions, resolveLimits } from './options.ts';
import type { ParseResult } from './parse-directory.ts';
import { directoryParser } from './parse-pool.ts';
import { DEFAULT_POLL_BUDGET, type PollBudget, PollMeter } from './poll-budget.ts';
import type { PollSignatures, SignatureGate } from './signature-gate.ts';
import { TreeCache } from './tree-cache.ts';

export interface GatheredFacts extends DirectoryFacts {
  /** Held until acted on: the poll holds every directory of its commits at once. */
  parsed: ParseResult<HeldTransaction> | undefined;
  /** What the results branch recorded when the poll started. */
  recorded: RecordedOutcome | undefined;
}

export interface FactOptions {
  parse: ParseOptions;
  /** What this poll may read; default DEFAULT_POLL_BUDGET. */
  budget?: PollBudget;
  /** Repository (without credentials) and branch, recorded as the Transactions' source. */
  repository: string;
  branch: string;
  /** --verify-signatures: who signed each directory that could be applied or rolled back. */
  gate?: SignatureGate | undefined;
  /** Told when a big poll parses on a thread of its own (parse-pool.ts), or loses it. */
  log?: Logger | undefined;
}

export interface Gathered {
  /** In Git order (commit by commit, then by name). */
  facts: GatheredFacts[];
  /**
   * The last commit whose directories are all in `facts`: the tip, unless the poll's budget
   * stopped earlier (the next poll reads on from here).
   */
  through: string;
}

/** Facts for the directory changes of `changes`, commit by commit, as far as the budget allows. */
export async function gatherFacts(
  session: GitSession,
  changes: ChangeSet,
  results: ResultsSnapshot,
  options: FactOptions,
): Promise<Gathered> {
  const { store } = session;
  const trees = new TreeCache(store);
  const meter = new PollMeter(options.budget ?? DEFAULT_POLL_BUDGET);
  const gathered: GatheredFacts[] = [];
  let through = changes.from ?? changes.to;
  // The tree each commit's changes are relative to: its predecessor on the branch, or nothing
  // when listChanges compared the tip with no base at all.
  const hasBase =
    changes.from !== undefined && changes.history !== 'initial' && changes.history !== 'unknown-base';
  const signatures = await options.gate?.forPoll(session, trees, options.branch);
  let beforeTree = hasBase && changes.from ? (await store.readCommit(changes.from)).tree : undefined;
  const limits = resolveLimits(options.parse.limits);
  const count = countRead(changes);
  const parser = directoryParser(options.parse, count, {
    onThreadLost: (error) =>
      options.log?.warn({ err: error }, 'the parse thread stopped: this poll parses on the main thread'),
  });
  if (parser.threaded) options.log?.debug({ directories: count }, 'parsing on a thread of its own');
  try {
    for (const [index, { commit, directories }] of changes.commits.entries()) {
      const first = index === 0;
      const read = directories.filter((d) => d.kind !== 'removed');
      if (!meter.admits(commit.oid, read.length, first)) return { facts: gathered, through };
      const before = gathered.length;
      let within = true;
      const reader = countingReader(trees.reader(commit.tree), (bytes) => {
        within &&= meter.spend(commit.oid, bytes, first);
      });
      const source = { repository: options.repository, branch: options.branch, commit: commit.oid };
      const settle = async ({ change, parsed }: Parsing) => {
        const fact = await directoryFact(trees, results, commit, beforeTree, change, await parsed, options);
        const signed = signatures && (await signaturesOf(signatures, fact));
        if (signed) fact.signatures = signed;
        gathered.push(fact);
      };
      // The next directories are read while the parser works on earlier ones.
      const ahead: Parsing[] = [];
      for (const change of read) {
        const loaded = await readingCommit(commit.oid, () => loadDirectory(reader, change.path, limits));
        if (!within) {
          gathered.length = before; // this commit waits for the next poll, whole
          return { facts: gathered, through };
        }
        const parsed = parser.parse(loaded, source);
        parsed.catch(() => {}); // awaited by settle; a poll that stops first leaves it behind
        ahead.push({ change, parsed });
        if (ahead.length > PARSE_AHEAD) await settle(ahead.shift() as Parsing);
      }
      for (const parsing of ahead) await settle(parsing);
      beforeTree = commit.tree;
      through = commit.oid;
    }
    return { facts: gathered, through };
  } finally {
    await parser.close();
  }
}

/** Directories read and waiting for the parser, besides the one it works on. */
const PARSE_AHEAD = 8;

interface Parsing {
  change: DirectoryChange;
  parsed: Promise<ParseResult<HeldTransaction>>;
}

function countRead(changes: ChangeSet): number {
  return changes.commits.reduce((n, c) => n + c.directories.filter((d) => d.kind !== 'removed').length, 0);
}

/** What the decision needs about one changed directory, parsed at `commit`. */
async function directoryFact(
  trees: TreeCache,
  results: ResultsSnapshot,
  commit: CommitInfo,
  beforeTree: string | undefined,
  change: DirectoryChange,
  parsed: ParseResult<HeldTransaction>,
  options: FactOptions,
): Promise<GatheredFacts> {
  const files = await diffFiles(trees, beforeTree, commit.tree, change.path);
  const namespace =
    change.kind === 'modified' && beforeTree !== undefined
      ? await namespaceAt(trees, beforeTree, change.path, options.parse.policy.defaultNamespace)
      : parsed.namespace;
  return {
    path: change.path,
    name: change.name,
    kind: change.kind,
    commit: commit.oid,
    parsed,
    namespace,
    changedFiles: files.changed,
    rollbackAdded: files.rollbackAdded,
    recorded: await recordedOutcome(results, namespace, change.path, change.name),
  };
}

/** What the results branch records about a directory: its outcome, else whether it is baseline. */
async function recordedOutcome(
  results: ResultsSnapshot,
  namespace: string,
  path: string,
  name: string,
): Promise<RecordedOutcome | undefined> {
  const outcome = await results.outcome(namespace, name);
  if (outcome) return outcome;
  return (await results.baseline()).has(path) ? { phase: PHASE_BASELINE, path } : undefined;
}

/**
 * Who signed a directory the decision may act on: one never applied (or rejected) from the
 * commit that created it; an applied one that gained a ROLLBACK file from the commit that added
 * it. Within one poll a directory applied at an earlier commit is still checked from its
 * creation: stricter, never looser.
 */
async function signaturesOf(
  signatures: PollSignatures,
  fact: GatheredFacts,
): Promise<GatheredFacts['signatures']> {
  const namespace = fact.parsed?.ok
    ? (fact.parsed.transaction.metadata.namespace ?? fact.namespace)
    : fact.namespace;
  const unapplied = fact.recorded === undefined || fact.recorded.phase === PHASE_REJECTED;
  if (unapplied) return signatures.directory(fact.commit, fact.path, namespace);
  if (fact.rollbackAdded) return signatures.directory(fact.commit, fact.path, fact.namespace, ROLLBACK_FILE);
  return undefined;
}

/** `reader`, telling `spend` the size of each file it reads. */
function countingReader(reader: DirectoryReader, spend: (bytes: number) => void): DirectoryReader {
  return {
    list: (path, maxEntries) => reader.list(path, maxEntries),
    read: async (path, maxBytes) => {
      const content = await reader.read(path, maxBytes);
      if (content.ok) spend(content.bytes.length);
      return content;
    },
  };
}

/** Files of the directory at `path` that differ between two commit trees. */
export async function diffFiles(
  trees: TreeCache,
  beforeTree: string | undefined,
  afterTree: string,
  path: string,
): Promise<{ changed: string[]; rollbackAdded: boolean }> {
  const before = await filesAt(trees, beforeTree, path);
  const after = await filesAt(trees, afterTree, path);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  return {
    changed: names.filter((n) => before.get(n) !== after.get(n)),
    rollbackAdded: after.has(ROLLBACK_FILE) && !before.has(ROLLBACK_FILE),
  };
}

async function filesAt(
  trees: TreeCache,
  tree: string | undefined,
  path: string,
): Promise<Map<string, string>> {
  if (tree === undefined) return new Map();
  try {
    const entry = await trees.resolve(tree, path);
    if (entry?.type !== 'tree') return new Map();
    return new Map([...(await trees.entries(entry.oid)).values()].map((e) => [e.path, e.oid]));
  } catch (error) {
    // A directory tree too large to read: the parser refused the directory (too-many-files).
    if (error instanceof GitObjectTooLargeError) return new Map();
    throw error;
  }
}

/**
 * The namespace transaction.yaml named in a tree: its metadata.namespace when that is a valid
 * name, else the default — the same rule the parser applies.
 */
export async function namespaceAt(
  trees: TreeCache,
  tree: string,
  path: string,
  fallback: string,
): Promise<string> {
  const file = joinPath(path, TRANSACTION_FILE);
  try {
    const entry = await trees.resolve(tree, file);
    if (entry?.type !== 'blob') return fallback;
    // The same bounds as the parser: no oversized blob is inflated, no hostile YAML parsed.
    const content = await trees.reader(tree).read(file, DEFAULT_LIMITS.maxFileBytes);
    if (!content.ok) return fallback;
    const text = new TextDecoder().decode(content.bytes);
    const doc = parseYamlValue(text) as { metadata?: { namespace?: unknown } } | null | undefined;
    const namespace = doc?.metadata?.namespace;
    return typeof namespace === 'string' && !dnsLabelProblem(namespace) ? namespace : fallback;
  } catch {
    return fallback;
  }
}

/** The paths of every transaction directory in `tree`, sorted. */
export async function listDirectories(session: GitSession, tree: string, root: string): Promise<string[]> {
  const trees = new TreeCache(session.store);
  const folder = await trees.resolve(tree, root);
  if (folder?.type !== 'tree') return [];
  return [...(await trees.entries(folder.oid)).values()]
    .filter((e) => e.type === 'tree')
    .map((e) => joinPath(root, e.path))
    .sort();
}
