import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { WebhookSecret } from './signature.ts';

export type BodyResult =
  | {
      readonly kind: 'complete';
      /** The whole body, or undefined when it was longer than `keepBytes` (then only hashed). */
      readonly body: Buffer | undefined;
      readonly bytes: number;
      /** HMAC-SHA256 of every byte received, when `hmacKey` was given. */
      readonly hmac: Buffer | undefined;
    }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'aborted' };

export interface BodyLimits {
  /** Longer bodies are refused: a declared Content-Length before a byte is read, else at the limit. */
  readonly maxBytes: number;
  /** At most this much is held in memory; past it the body is only hashed, chunk by chunk. */
  readonly keepBytes: number;
  /** The whole body must arrive within this long after the headers. */
  readonly timeoutMs: number;
  /** Key of the HMAC-SHA256 computed as the body streams in. */
  readonly hmacKey?: WebhookSecret | undefined;
}

/**
 * Reads a request body as it streams in: each chunk updates the HMAC and is kept only while the
 * body is no longer than `keepBytes`, so a request holds at most that much memory however large
 * its body, and a slow sender is cut off after `timeoutMs`.
 */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes) return Promise.resolve({ kind: 'too-large' });

  return new Promise((resolve) => {
    const hmac = limits.hmacKey === undefined ? undefined : createHmac('sha256', limits.hmacKey);
    let chunks: Buffer[] | undefined = [];
    let received = 0;
    const finish = (result: BodyResult): void => {
      clearTimeout(timer);
      // The error listener stays: a late client reset after this point must not go unhandled.
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(result);
    };
    const stop = (result: BodyResult): void => {
      req.pause();
      chunks = undefined;
      finish(result);
    };
    const timer = setTimeout(() => stop({ kind: 'timed-out' }), limits.timeoutMs);
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limits.maxBytes) {
        stop({ kind: 'too-large' });
        return;
      }
      hmac?.update(chunk);
      if (received > limits.keepBytes) chunks = undefined;
      else chunks?.push(chunk);
    };
    const onEnd = (): void =>
      finish({
        kind: 'complete',
        body: chunks && Buffer.concat(chunks, received),
        bytes: received,
        hmac: hmac?.digest(),
      });
    const onAbort = (): void => finish({ kind: 'aborted' });
    const onClose = (): void => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onClose);
  });
}
