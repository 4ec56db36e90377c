/**
 * Renders of every source, queued fairly (docs/sources.md, "The sandbox"): at most
 * `limits.concurrency` at once in the process and one at a time per source, a free slot going to
 * the source with the fewest running, the earliest asked among equals (runtime/slot-rules.ts), so
 * one slow chart never holds the others. A render writes its checkout (the caller's function, e.g.
 * checkoutCommit within the repository's run), renders it in the sandbox, and removes it,
 * also when it failed.
 */
import { type Logger, silentLogger } from '../log/index.ts';
import { SlotRunner } from '../runtime/slot-runner.ts';
import type { Checkout } from './checkout.ts';
import type { Decryption } from './decrypt-inputs.ts';
import { DEFAULT_RENDER_LIMITS, type RenderLimits } from './limits.ts';
import { renderCheckout } from './render.ts';
import { RenderInputError } from './render-error.ts';
import { boundedMessage } from './tool-errors.ts';
import type { RenderTools } from './tools.ts';
import type { RenderRequest, RenderResult } from './types.ts';

export interface RenderJob {
  /** The source (`<namespace>/<name>`): its renders run one at a time, and share slots fairly with others'. */
  readonly source: string;
  readonly request: RenderRequest;
  /** Writes the checkout to render; RenderInputError for a commit a render refuses. */
  readonly checkout: () => Promise<Checkout>;
  /** The keys of the source's SOPS files (decrypt-inputs.ts); none: they are left encrypted. */
  readonly decryption?: Decryption | undefined;
}

export interface RendererOptions {
  readonly tools: RenderTools;
  readonly limits?: RenderLimits | undefined;
  readonly logger?: Logger | undefined;
}

export class Renderer {
  readonly #tools: RenderTools;
  readonly #limits: RenderLimits;
  readonly #runner: SlotRunner<RenderResult>;
  #next = 0;
  /** Every render not yet settled: rejected when the renderer stops. */
  readonly #pending = new Map<string, (error: Error) => void>();

  constructor(options: RendererOptions) {
    this.#tools = options.tools;
    this.#limits = options.limits ?? DEFAULT_RENDER_LIMITS;
    this.#runner = new SlotRunner<RenderResult>({
      caps: { total: this.#limits.concurrency, perGroup: 1 },
      logger: options.logger ?? silentLogger(),
    });
  }

  get limits(): RenderLimits {
    return this.#limits;
  }

  /** Whether the job with this key waits for a slot or runs (for tests and metrics). */
  stateOf(key: string): ReturnType<SlotRunner<RenderResult>['stateOf']> {
    return this.#runner.stateOf(key);
  }

  /**
   * Renders `job` when a slot is free. Resolves with the render's result; rejects only for what
   * is no fault of the repository (the object store failing, the renderer stopped).
   */
  render(job: RenderJob): Promise<RenderResult> {
    const key = `${job.source}#${++this.#next}`;
    return new Promise((resolve, reject) => {
      this.#pending.set(key, reject);
      this.#runner.start({
        key,
        owner: job.source,
        group: job.source,
        run: (signal) => this.#renderOne(job, signal),
        onSettled: () => {
          this.#pending.delete(key);
          const result = this.#runner.take(key);
          if (result?.ok) resolve(result.value);
          else reject(result?.error ?? new Error(`render ${key} lost its result`));
        },
      });
      if (this.#runner.stateOf(key) === undefined) {
        this.#pending.delete(key);
        reject(new Error('the renderer is stopped'));
      }
    });
  }

  /** Kills every running render and rejects every render not settled; nothing starts after. */
  stop(): void {
    this.#runner.stop();
    for (const reject of this.#pending.values()) reject(new Error('the renderer is stopped'));
    this.#pending.clear();
  }

  async #renderOne(job: RenderJob, signal: AbortSignal): Promise<RenderResult> {
    let checkout: Checkout;
    try {
      checkout = await job.checkout();
    } catch (error) {
      if (!(error instanceof RenderInputError)) throw error;
      return {
        ok: false,
        failure: {
          tool: 'janus',
          bound: 'input',
          file: error.file === undefined ? undefined : boundedMessage(error.file),
          line: error.line,
          message: boundedMessage(error.message),
        },
      };
    }
    try {
      return await renderCheckout(checkout, job.request, {
        tools: this.#tools,
        limits: this.#limits,
        signal,
        decryption: job.decryption,
      });
    } finally {
      await checkout.remove();
    }
  }
}
