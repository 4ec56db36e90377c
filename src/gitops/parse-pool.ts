/**
 * Where a poll parses its directories. A commit that brings hundreds of directories parses for
 * seconds (YAML is most of a big poll's CPU), on the thread that also runs the controller. Such
 * a poll parses on a thread of its own, started for it and stopped after it, while this thread
 * reads the next directories from Git; a small poll parses here, where starting a thread would
 * cost more than it saves. Both run parseLoadedDirectory on the same loaded files.
 *
 * A commit adding 400 directories (npm run bench -- cli, 2026-11-26, with the fetch of
 * upload-pack.ts): its last Transaction created after 3.6-3.8 s against 4.2 s, the controller's
 * thread free of the parse. The thread costs ~30 MiB while it runs (a Node environment, ~18 MiB,
 * and the parser's modules, ~13 MiB), less what the parse's garbage no longer takes on this
 * thread's heap: the poll's peak 145-148 against 133 MiB.
 */
import { Worker } from 'node:worker_threads';
import { type HeldTransaction, holdParsed } from './held-transaction.ts';
import type { LoadedDirectory } from './load-directory.ts';
import type { ParseOptions, SourceInfo } from './options.ts';
import { type ParseResult, parseLoadedDirectory } from './parse-directory.ts';

/** A poll of this many directories or more parses on a thread of its own. */
export const PARSE_THREAD_MIN_DIRECTORIES = 16;

export interface DirectoryParser {
  /** Whether the parses run on a thread of their own. */
  readonly threaded: boolean;
  parse(directory: LoadedDirectory, source?: SourceInfo): Promise<ParseResult<HeldTransaction>>;
  /** Stops the thread, if any; a parse still pending rejects. */
  close(): Promise<void>;
}

/** A message to parse-worker.ts. */
export interface ParseRequest {
  id: number;
  directory: LoadedDirectory;
  source: SourceInfo | undefined;
}

/** parse-worker.ts's answer: the result, or the stack of what a bug threw. */
export type ParseReply =
  | { id: number; result: ParseResult<HeldTransaction>; failure?: undefined }
  | { id: number; failure: string; result?: undefined };

export interface ParserOptions {
  /** Threads for a big parse (default 1): `janus validate` uses one per core, a poll one. */
  threads?: number;
  /** The thread stopped or could not start: its parses, and the poll's next, run on this one. */
  onThreadLost?: ((error: Error) => void) | undefined;
  /** The worker script; parse-worker.ts unless a test needs one that fails. */
  worker?: URL;
}

/** The parser for a poll that reads `directories` directories. */
export function directoryParser(
  options: ParseOptions,
  directories: number,
  parser: ParserOptions = {},
): DirectoryParser {
  if (directories < PARSE_THREAD_MIN_DIRECTORIES) return inlineParser(options);
  const threads = Math.max(
    1,
    Math.min(parser.threads ?? 1, Math.floor(directories / PARSE_THREAD_MIN_DIRECTORIES)),
  );
  if (threads === 1) return threadParser(options, parser);
  // Each parse to the next thread in turn: directories are alike enough that turns balance them.
  const members = Array.from({ length: threads }, () => threadParser(options, parser));
  let turn = 0;
  return {
    get threaded() {
      return members.some((m) => m.threaded);
    },
    parse: (directory, source) => (members[turn++ % threads] as DirectoryParser).parse(directory, source),
    close: async () => {
      await Promise.all(members.map((m) => m.close()));
    },
  };
}

export function inlineParser(options: ParseOptions): DirectoryParser {
  return {
    threaded: false,
    parse: async (directory, source) => holdParsed(parseLoadedDirectory(directory, options, source)),
    close: async () => {},
  };
}

/** The worker in the form this module runs in: compiled (dist/) or TypeScript (bin/janus, tests). */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js',
  import.meta.url,
);

/**
 * Parses on a thread of its own. The thread only saves time: when it cannot start (a
 * container's limit on threads) or stops (its heap exhausted), what it had not answered is
 * parsed on this thread, as without it, and so is the rest of the poll.
 */
export function threadParser(options: ParseOptions, parser: ParserOptions = {}): DirectoryParser {
  const inline = inlineParser(options);
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let worker: Worker | undefined;
  let closed = false;
  const lose = (error: Error) => {
    if (closed || worker === undefined) return;
    worker = undefined;
    parser.onThreadLost?.(error);
    for (const waiting of pending.values()) waiting.resolve(inline.parse(waiting.directory, waiting.source));
    pending.clear();
  };
  try {
    // No environment: the parse reads none, and the thread need not hold the Git credentials.
    worker = new Worker(parser.worker ?? WORKER_URL, { name: 'janus-parse', workerData: options, env: {} });
  } catch (error) {
    parser.onThreadLost?.(error instanceof Error ? error : new Error(String(error)));
    return inline;
  }
  worker.on('message', (reply: ParseReply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.result) waiting?.resolve(reply.result);
    // parseLoadedDirectory threw: a bug, which parsing here would meet again.
    else waiting?.reject(new Error(`parsing ${waiting.directory.path} failed: ${reply.failure}`));
  });
  worker.on('error', lose);
  worker.on('exit', (code) => lose(new Error(`the parse thread stopped (exit code ${code})`)));
  return {
    get threaded() {
      return worker !== undefined;
    },
    parse(directory, source) {
      if (worker === undefined) return inline.parse(directory, source);
      const id = nextId++;
      const waiting = Promise.withResolvers<ParseResult<HeldTransaction>>();
      pending.set(id, { ...waiting, directory, source });
      worker.postMessage({ id, directory, source } satisfies ParseRequest);
      return waiting.promise;
    },
    async close() {
      closed = true;
      for (const waiting of pending.values()) waiting.reject(new Error('the parse thread was closed'));
      pending.clear();
      await worker?.terminate();
    },
  };
}

/** A parse sent to the thread, kept until answered: a thread lost leaves it to this one. */
interface Pending extends PromiseWithResolvers<ParseResult<HeldTransaction>> {
  directory: LoadedDirectory;
  source: SourceInfo | undefined;
}
