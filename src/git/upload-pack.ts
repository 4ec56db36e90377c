/**
 * The fetching side of Git's smart HTTP protocol, version 2 (gitprotocol-v2(5)): the server's
 * capabilities, its refs under a prefix (ls-refs), and one fetch whose pack goes straight to a
 * file. Three requests for a poll that finds new commits, two for one that finds none.
 *
 * isomorphic-git's fetch asks for the capabilities again, and holds the pack in memory twice
 * over while indexing it (pack-indexer.ts says what that cost). A server that speaks only
 * version 0 or 1 is still fetched from through isomorphic-git (http-transport.ts).
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { GitHttpResponse, HttpClient } from 'isomorphic-git';
import { FLUSH, ProtocolError, pktLine } from './receive-pack-protocol.ts';
import { expectMediaType, readBody } from './smart-http.ts';

export interface UploadPackEndpoint {
  http: HttpClient;
  url: string;
  /** Authorization, as the transport gives it; a fresh copy per request. */
  headers: () => Record<string, string>;
}

/** What a version 2 server offers: "fetch=shallow" gives the `fetch` key the value "shallow". */
export type Capabilities = ReadonlyMap<string, string>;

const V2_HEADER = { 'git-protocol': 'version=2' };
/** Capabilities are a few lines; refs under one branch's name, one line each. */
const MAX_ADVERTISEMENT_BYTES = 1024 * 1024;
const MAX_LS_REFS_BYTES = 16 * 1024 * 1024;
const OID = /^[0-9a-f]{40}$/;
/** Shallow-info lines taken from one fetch: a shallow fetch of one branch has a handful. */
const MAX_SHALLOW_LINES = 100_000;

/** The server's version 2 capabilities; undefined when it answers in version 0 or 1. */
export async function discoverV2(endpoint: UploadPackEndpoint): Promise<Capabilities | undefined> {
  const res = await endpoint.http.request({
    method: 'GET',
    url: `${endpoint.url}/info/refs?service=git-upload-pack`,
    headers: { ...endpoint.headers(), ...V2_HEADER },
  });
  const body = await readBody(res, MAX_ADVERTISEMENT_BYTES);
  expectMediaType(res, 'application/x-git-upload-pack-advertisement', body);
  const lines = textLines(body);
  if (lines[0] !== 'version 2') return undefined;
  return new Map(
    lines.slice(1).map((line) => {
      const eq = line.indexOf('=');
      return eq < 0 ? [line, ''] : [line.slice(0, eq), line.slice(eq + 1)];
    }),
  );
}

/** The refs whose names start with `prefix`, name → oid. */
export async function lsRefs(endpoint: UploadPackEndpoint, prefix: string): Promise<Map<string, string>> {
  const body = await command(endpoint, 'ls-refs', [`ref-prefix ${prefix}`], MAX_LS_REFS_BYTES);
  const refs = new Map<string, string>();
  for (const line of textLines(body)) {
    const [oid = '', name = ''] = line.split(' ');
    if (!OID.test(oid) || name === '')
      throw new ProtocolError(`a malformed ls-refs line ${JSON.stringify(line)}`);
    refs.set(name, oid);
  }
  return refs;
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

/** Fetches `request.want`, writing the pack's bytes to `packFile`. */
export async function fetchPack(
  endpoint: UploadPackEndpoint,
  request: FetchRequest,
  packFile: string,
): Promise<FetchedPack> {
  const args = [
    'ofs-delta',
    'no-progress',
    `want ${request.want}`,
    ...request.haves.map((oid) => `have ${oid}`),
    ...[...request.shallow].map((oid) => `shallow ${oid}`),
    ...(request.deepen ? [`deepen ${request.deepen.depth}`] : []),
    ...(request.deepen?.relative ? ['deepen-relative'] : []),
    'done',
  ];
  const res = await post(endpoint, 'fetch', args);
  const out = createWriteStream(packFile);
  // A failed write (a full disk) is kept and thrown here, never left as an unhandled 'error'.
  let failed: Error | undefined;
  out.on('error', (error) => {
    failed ??= error;
  });
  const result: FetchedPack = { shallow: [], unshallow: [], packBytes: 0 };
  try {
    await readFetchResponse(res, result, async (data) => {
      if (failed) throw failed;
      result.packBytes += data.length;
      if (!out.write(data)) await once(out, 'drain');
    });
  } finally {
    out.end();
    await finished(out).catch(() => {});
  }
  if (failed) throw failed;
  return result;
}

const SECTIONS: ReadonlySet<string> = new Set([
  'acknowledgments',
  'shallow-info',
  'wanted-refs',
  'packfile-uris',
  'packfile',
]);

/** The sections of a fetch response, in order; the packfile's data goes to `onPack`. */
async function readFetchResponse(
  res: GitHttpResponse,
  result: FetchedPack,
  onPack: (data: Buffer) => Promise<void>,
): Promise<void> {
  let section: string | undefined;
  for await (const line of pktLines(res.body ?? emptyBody())) {
    if (line === 'flush') return;
    if (line === 'delim') section = undefined;
    else if (section !== undefined) await sectionLine(section, line, result, onPack);
    else {
      section = line.toString('utf8').trimEnd();
      if (section.startsWith('ERR '))
        throw new ProtocolError(`the server refused the fetch: ${section.slice(4)}`);
      if (!SECTIONS.has(section))
        throw new ProtocolError(
          `an unknown section ${JSON.stringify(section.slice(0, 80))} in the fetch response`,
        );
    }
  }
  throw new ProtocolError('the fetch response ended before its final flush');
}

/** One line of a section: the pack's data (band 1), its progress (2) or error (3), shallow-info. */
async function sectionLine(
  section: string,
  line: Buffer,
  result: FetchedPack,
  onPack: (data: Buffer) => Promise<void>,
): Promise<void> {
  if (section === 'packfile') {
    if (line[0] === 1) await onPack(line.subarray(1));
    else if (line[0] === 3)
      throw new ProtocolError(`the server failed the fetch: ${line.subarray(1).toString('utf8').trim()}`);
  } else if (section === 'shallow-info') {
    const [kind, oid = ''] = line.toString('utf8').trimEnd().split(' ');
    if (!OID.test(oid) || (kind !== 'shallow' && kind !== 'unshallow'))
      throw new ProtocolError('a malformed shallow-info line');
    if (result.shallow.length + result.unshallow.length >= MAX_SHALLOW_LINES)
      throw new ProtocolError(`the server sent more than ${MAX_SHALLOW_LINES} shallow-info lines`);
    (kind === 'shallow' ? result.shallow : result.unshallow).push(oid);
  }
}

/** A version 2 command whose whole (small) answer is read. */
async function command(
  endpoint: UploadPackEndpoint,
  name: string,
  args: string[],
  maxBytes: number,
): Promise<Buffer> {
  return readBody(await post(endpoint, name, args), maxBytes);
}

async function post(endpoint: UploadPackEndpoint, name: string, args: string[]): Promise<GitHttpResponse> {
  const body = Buffer.concat([
    pktLine(`command=${name}\n`),
    Buffer.from('0001', 'latin1'),
    ...args.map((a) => pktLine(`${a}\n`)),
    FLUSH,
  ]);
  const res = await endpoint.http.request({
    method: 'POST',
    url: `${endpoint.url}/git-upload-pack`,
    headers: {
      ...endpoint.headers(),
      ...V2_HEADER,
      'content-type': 'application/x-git-upload-pack-request',
      accept: 'application/x-git-upload-pack-result',
    },
    body: (async function* () {
      yield body;
    })(),
  });
  if (res.statusCode !== 200) await readBody(res, MAX_ADVERTISEMENT_BYTES); // throws HttpError
  try {
    expectMediaType(res, 'application/x-git-upload-pack-result', Buffer.alloc(0));
  } catch (error) {
    await res.body?.return?.(); // closes the connection rather than leave it until the idle timeout
    throw error;
  }
  return res;
}

/** pkt-lines of a streamed body: their payloads, 'flush' (0000) and 'delim' (0001). */
async function* pktLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer | 'flush' | 'delim'> {
  let pending = Buffer.alloc(0);
  for await (const chunk of body) {
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

/** The text lines of a small response, up to its flush. */
function textLines(body: Buffer): string[] {
  const lines: string[] = [];
  let at = 0;
  while (at + 4 <= body.length) {
    const hex = body.toString('latin1', at, at + 4);
    const length = /^[0-9a-f]{4}$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
    if (length === 0) break;
    if (!(length >= 4) || at + length > body.length)
      throw new ProtocolError(`a malformed pkt-line at byte ${at} (${JSON.stringify(hex)})`);
    const text = body.toString('utf8', at + 4, at + length).replace(/\n$/, '');
    if (text.startsWith('ERR ')) throw new ProtocolError(`the server refused the request: ${text.slice(4)}`);
    lines.push(text);
    at += length;
  }
  return lines;
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
