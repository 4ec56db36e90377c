/**
 * Where a render's output is read as objects: on a thread of its own, started for it and ended
 * after it, with a heap bound and a deadline. What a tool wrote (up to --render-max-bytes) is
 * whatever the repository's author made it; the yaml library takes ~60x the text while it parses
 * ordinary output (4 MiB: 250 MB resident) and far more for dense flow collections (1 MiB of
 * `[],`: 560 MB), so on the main thread one commit could exhaust the process's heap, and every
 * re-render of it again (a crash loop for every tenant). On this thread such a parse ends at the
 * heap bound as a RenderFailure (bound 'memory'), and the main thread receives only the objects
 * (about 4x the text for ordinary output). The worker pattern of src/gitops/parse-pool.ts: the
 * script in the form this module runs in, no environment.
 */
import { Worker } from 'node:worker_threads';
import type { KubeObject } from '../kube/resources.ts';

/**
 * Values (mappings, sequences, scalars) a render's objects may hold: what comes back to the main
 * thread costs ~40 bytes a value there, whatever the text's size (1 MiB of `[],` is 350,000 empty
 * sequences, 14 MiB on the heap), so a million is ~40-60 MiB. Ordinary output holds one value per
 * 16-30 bytes: 16 MiB of it (--render-max-bytes) stays under.
 */
export const MAX_OUTPUT_VALUES = 1_048_576;

/** A text to read as objects; `what` names it in messages (a file, "helm's output"). */
export interface OutputText {
  readonly what: string;
  readonly text: string;
}

/** output-worker.ts's answer. */
export type ThreadParsed =
  | { ok: true; objects: KubeObject[] }
  | { ok: false; what: string; message: string; line?: number | undefined; bound?: 'output' | undefined };

export type OutputParsed =
  | ThreadParsed
  | {
      ok: false;
      /** None: the thread failed for no bound (a bug in the parse, which parseObjects never throws for input). */
      bound?: 'memory' | 'time' | undefined;
      message: string;
      what?: undefined;
      line?: undefined;
    };

export interface OutputParseLimits {
  /** The thread's heap (V8's old generation), in bytes. */
  readonly heapBytes: number;
  /** Wall time of the parse, in milliseconds; then the thread is stopped. */
  readonly timeoutMs: number;
}

const MiB = 1024 * 1024;

/** The worker in the form this module runs in: compiled (dist/) or TypeScript (bin/janus, tests). */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './output-worker.ts' : './output-worker.js',
  import.meta.url,
);

/**
 * The objects of `texts`, in order, read on a thread of its own. A thread that cannot start
 * fails the render (never a parse here: that is what the thread bounds).
 */
export function parseOnThread(
  texts: readonly OutputText[],
  limits: OutputParseLimits,
  signal?: AbortSignal,
): Promise<OutputParsed> {
  const heapMb = Math.max(16, Math.floor(limits.heapBytes / MiB));
  const { promise, resolve } = Promise.withResolvers<OutputParsed>();
  let worker: Worker;
  try {
    worker = new Worker(WORKER_URL, {
      name: 'janus-render-output',
      workerData: texts,
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 8 },
    });
  } catch (error) {
    return Promise.resolve({
      ok: false,
      message: `the render's output could not be read: no thread to read it on (${error instanceof Error ? error.message : String(error)})`,
    });
  }
  let settled = false;
  const settle = (outcome: OutputParsed) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    resolve(outcome);
    void worker.terminate();
  };
  const timer = setTimeout(
    () =>
      settle({
        ok: false,
        bound: 'time',
        message: `reading the render's output as YAML took longer than ${limits.timeoutMs / 1000} s and was stopped (--render-timeout)`,
      }),
    limits.timeoutMs,
  );
  const onAbort = () =>
    settle({
      ok: false,
      bound: 'time',
      message: "reading the render's output was stopped: the render was cancelled",
    });
  signal?.addEventListener('abort', onAbort, { once: true });
  worker.on('message', (parsed: ThreadParsed) => settle(parsed));
  worker.on('error', (error: Error & { code?: string }) =>
    settle(
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? {
            ok: false,
            bound: 'memory',
            message: `reading the render's output as YAML needed more than ${heapMb} MiB of memory and was stopped (--render-memory); the output is too large or its collections too dense`,
          }
        : { ok: false, message: `reading the render's output failed: ${error.message}` },
    ),
  );
  worker.on('exit', (code) =>
    settle({ ok: false, message: `reading the render's output stopped (exit code ${code})` }),
  );
  return promise;
}
