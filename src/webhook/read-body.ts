import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { readonly kind: 'complete'; readonly body: Buffer }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'aborted' };

/**
 * Reads the whole request body, giving up as soon as it exceeds `maxBytes`: a declared
 * Content-Length over the limit is refused before a byte is read, and a chunked body is cut off
 * at the limit. The signature covers the whole body, so nothing can be verified before the end.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ kind: 'too-large' });

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (result: BodyResult): void => {
      // The error listener stays: a late client reset after this point must not go unhandled.
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        req.pause();
        finish({ kind: 'too-large' });
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => finish({ kind: 'complete', body: Buffer.concat(chunks, received) });
    const onAbort = (): void => finish({ kind: 'aborted' });
    const onClose = (): void => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onClose);
  });
}
