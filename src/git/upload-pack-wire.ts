/**
 * What fetching over smart HTTP shares whatever the protocol version (upload-pack-v2.ts,
 * upload-pack-v0.ts): the request, pkt-lines read as they stream in, the side-band that carries
 * the pack, and the pack written straight to a file, never held.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { GitHttpResponse, HttpClient } from 'isomorphic-git';
import { ProtocolError } from './receive-pack-protocol.ts';
import { expectMediaType, readBody } from './smart-http.ts';

export interface UploadPackEndpoint {
  http: HttpClient;
  url: string;
  /** Authorization, as the transport gives it; a fresh copy per request. */
  headers: () => Record<string, string>;
}

export interface FetchRequest {
  want: string;
  /** Commits the cache has (the tracking ref's tip). */
  haves: readonly string[];
  /** The cache's shallow commits: the server must not assume their parents are here. */
  shallow: ReadonlySet<string>;
  /** `deepen <depth>`; relative: counted from the current shallow commits. */
  deepen?: { depth: number; relative?: boolean };
}

export interface FetchedPack {
  /** Commits now shallow (their parents not fetched), and those no longer so. */
  shallow: string[];
  unshallow: string[];
  /** Bytes of pack written to `packFile` (0: the server sent an empty pack, or none). */
  packBytes: number;
}

export const OID = /^[0-9a-f]{40}$/;
export const V2_HEADER = { 'git-protocol': 'version=2' };
/** What an error response's body may hold of the server's words. */
const MAX_ERROR_BYTES = 1024 * 1024;
/** Shallow-info lines taken from one fetch: a shallow fetch of one branch has a handful. */
const MAX_SHALLOW_LINES = 100_000;

/** A POST to git-upload-pack; `v2`: with the header that asks for protocol version 2. */
export async function postUploadPack(
  endpoint: UploadPackEndpoint,
  body: Buffer,
  v2: boolean,
): Promise<GitHttpResponse> {
  const res = await endpoint.http.request({
    method: 'POST',
    url: `${endpoint.url}/git-upload-pack`,
    headers: {
      ...endpoint.headers(),
      ...(v2 && V2_HEADER),
      'content-type': 'application/x-git-upload-pack-request',
      accept: 'application/x-git-upload-pack-result',
    },
    body: (async function* () {
      yield body;
    })(),
  });
  if (res.statusCode !== 200) await readBody(res, MAX_ERROR_BYTES); // throws HttpError
  try {
    expectMediaType(res, 'application/x-git-upload-pack-result', Buffer.alloc(0));
  } catch (error) {
    await res.body?.return?.(); // closes the connection rather than leave it until the idle timeout
    throw error;
  }
  return res;
}

/**
 * Streams the pack `read` passes to its callback into `packFile`; returns its length. A failed
 * write (a full disk) is kept and thrown, never left as an unhandled 'error'.
 */
export async function writePackFile(
  packFile: string,
  read: (onPack: (data: Buffer) => Promise<void>) => Promise<void>,
): Promise<number> {
  const out = createWriteStream(packFile);
  let failed: Error | undefined;
  out.on('error', (error) => {
    failed ??= error;
  });
  let bytes = 0;
  try {
    await read(async (data) => {
      if (failed) throw failed;
      bytes += data.length;
      if (!out.write(data)) await once(out, 'drain');
    });
  } finally {
    out.end();
    await finished(out).catch(() => {});
  }
  if (failed) throw failed;
  return bytes;
}

/** One pkt-line of the side-band: the pack's data (band 1), progress (2), the server's error (3). */
export async function sideBandLine(line: Buffer, onPack: (data: Buffer) => Promise<void>): Promise<void> {
  if (line[0] === 1) await onPack(line.subarray(1));
  else if (line[0] === 3)
    throw new ProtocolError(`the server failed the fetch: ${line.subarray(1).toString('utf8').trim()}`);
  else if (line[0] !== 2) throw new ProtocolError(`a side-band line of unknown band ${line[0]}`);
}

/** One `shallow <oid>` or `unshallow <oid>` line, added to `result`. */
export function shallowInfoLine(line: Buffer, result: FetchedPack): void {
  const text = line.toString('utf8').trimEnd();
  if (text.startsWith('ERR ')) throw new ProtocolError(`the server refused the fetch: ${text.slice(4)}`);
  const [kind, oid = ''] = text.split(' ');
  if (!OID.test(oid) || (kind !== 'shallow' && kind !== 'unshallow'))
    throw new ProtocolError('a malformed shallow-info line');
  if (result.shallow.length + result.unshallow.length >= MAX_SHALLOW_LINES)
    throw new ProtocolError(`the server sent more than ${MAX_SHALLOW_LINES} shallow-info lines`);
  (kind === 'shallow' ? result.shallow : result.unshallow).push(oid);
}

/** pkt-lines of a streamed body: their payloads, 'flush' (0000) and 'delim' (0001). */
export async function* pktLines(
  body: AsyncIterable<Uint8Array> | undefined,
): AsyncGenerator<Buffer | 'flush' | 'delim'> {
  let pending = Buffer.alloc(0);
  for await (const chunk of body ?? []) {
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
    let at = 0;
    while (pending.length - at >= 4) {
      const hex = pending.toString('latin1', at, at + 4);
      const length = /^[0-9a-f]{4}$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
      if (length === 0 || length === 1) {
        yield length === 0 ? 'flush' : 'delim';
        at += 4;
        continue;
      }
      if (!(length >= 4)) throw new ProtocolError(`a malformed pkt-line (${JSON.stringify(hex)})`);
      if (pending.length - at < length) break;
      yield pending.subarray(at + 4, at + length);
      at += length;
    }
    pending = pending.subarray(at);
  }
  if (pending.length > 0) throw new ProtocolError('the response ends inside a pkt-line');
}

/** A pkt-line's text, without its newline. */
export function lineText(line: Buffer): string {
  return line.toString('utf8').replace(/\n$/, '');
}
