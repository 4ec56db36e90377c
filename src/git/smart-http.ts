/** What fetching (upload-pack.ts) and pushing (smart-http-push.ts) over smart HTTP share. */
import { Errors, type GitHttpResponse } from 'isomorphic-git';
import { ProtocolError } from './receive-pack-protocol.ts';

/** The whole body of a 200 response, at most `maxBytes`; any other status is an HttpError. */
export async function readBody(res: GitHttpResponse, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of res.body ?? []) {
    length += chunk.byteLength;
    if (length > maxBytes) {
      if (res.statusCode !== 200) break;
      throw new ProtocolError(`the server's reply is longer than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (res.statusCode !== 200)
    throw new Errors.HttpError(res.statusCode, res.statusMessage, body.toString('utf8').slice(0, 1000));
  return body;
}

/**
 * Throws SmartHttpError unless the response is of `mediaType`: a dumb HTTP server, or a sign-in
 * page, is not a Git server. `body`, what was read of it, goes into the error.
 */
export function expectMediaType(res: GitHttpResponse, mediaType: string, body: Uint8Array): void {
  const received = res.headers?.['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (received === mediaType) return;
  const text = Buffer.from(body).toString('utf8');
  throw new Errors.SmartHttpError(text.slice(0, 160), text);
}
