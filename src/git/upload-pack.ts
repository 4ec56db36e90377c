/**
 * The fetching side of Git's smart HTTP protocol: discovery (GET info/refs, asking for
 * version 2), then whichever version the server answers in. Either way the pack is streamed to
 * a file and indexed by pack-indexer.ts, with the same bounds and the same connectivity check
 * (http-transport.ts): the protocol a server speaks changes the requests, never what a pack
 * may cost. (isomorphic-git's fetch, which served version 0 and 1 before, held the pack and
 * every object whole: a 1 GiB file of zeros, a ~1 MB pack, took `janus run` past 4 GiB.)
 */
import { ProtocolError } from './receive-pack-protocol.ts';
import { expectMediaType, readBody } from './smart-http.ts';
import { fetchPackV0, type V0Capabilities } from './upload-pack-v0.ts';
import { type Capabilities, fetchPackV2, lsRefs, servesJanus } from './upload-pack-v2.ts';
import {
  type FetchedPack,
  type FetchRequest,
  lineText,
  OID,
  pktLines,
  type UploadPackEndpoint,
  V2_HEADER,
} from './upload-pack-wire.ts';

export type { FetchedPack, FetchRequest, UploadPackEndpoint } from './upload-pack-wire.ts';

/** A server's upload-pack, in the protocol version it speaks. */
export interface UploadPack {
  readonly version: 0 | 2;
  /** The tip of the ref discovery was asked about; undefined when the server has no such ref. */
  tip(): Promise<string | undefined>;
  /** Fetches `request.want`, writing the pack's bytes to `packFile`. */
  fetch(request: FetchRequest, packFile: string): Promise<FetchedPack>;
}

/** What discovery found: version 2's capabilities, or version 0's with the ref's tip. */
export type Discovered =
  | { version: 2; capabilities: Capabilities }
  | { version: 0; capabilities: V0Capabilities; tip: string | undefined };

const ADVERTISEMENT = 'application/x-git-upload-pack-advertisement';
/** Version 2's capabilities are a few lines, held. */
const MAX_CAPABILITY_BYTES = 1024 * 1024;
/**
 * A version 0 advertisement lists every ref of the repository; it is read as it streams, and
 * only the watched branch's line and the capabilities are kept. ~1,000,000 refs.
 */
export const MAX_V0_ADVERTISEMENT_BYTES = 64 * 1024 * 1024;
/** Lines of the "# service=" header before its flush (git sends none). */
const MAX_HEADER_LINES = 100;

/** Asks for version 2; a server that does not speak it (or not enough of it) is fetched from in version 0. */
export async function openUploadPack(endpoint: UploadPackEndpoint, ref: string): Promise<UploadPack> {
  let found = await discover(endpoint, ref, true);
  if (found.version === 2 && !servesJanus(found.capabilities)) {
    // A version 2 server without ls-refs or shallow fetches: asked again, for version 0.
    found = await discover(endpoint, ref, false);
    if (found.version === 2)
      throw new ProtocolError(
        'the server speaks only protocol version 2, and offers no ls-refs or no shallow fetch there',
      );
  }
  expectSha1(found.capabilities.get('object-format'));
  if (found.version === 2)
    return {
      version: 2,
      tip: async () => (await lsRefs(endpoint, ref)).get(ref),
      fetch: (request, packFile) => fetchPackV2(endpoint, request, packFile),
    };
  const { capabilities, tip } = found;
  return {
    version: 0,
    tip: async () => tip,
    fetch: (request, packFile) => fetchPackV0(endpoint, capabilities, request, packFile),
  };
}

/** GET info/refs: the server's capabilities, and in version 0 the tip of `ref`. */
async function discover(endpoint: UploadPackEndpoint, ref: string, v2: boolean): Promise<Discovered> {
  const res = await endpoint.http.request({
    method: 'GET',
    url: `${endpoint.url}/info/refs?service=git-upload-pack`,
    headers: { ...endpoint.headers(), ...(v2 && V2_HEADER) },
  });
  if (res.statusCode !== 200) await readBody(res, MAX_CAPABILITY_BYTES); // throws HttpError
  const type = res.headers?.['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== ADVERTISEMENT) expectMediaType(res, ADVERTISEMENT, await readBody(res, MAX_CAPABILITY_BYTES));
  return readAdvertisement(pktLines(res.body), ref);
}

/**
 * Reads a ref advertisement to its end: an optional "# service=git-upload-pack" header up to a
 * flush (git sends it in version 0; some servers in version 2 too), then "version 2" and the
 * capabilities, or (version 0, "version 1" first or not) the refs, the first carrying the
 * capabilities after a NUL. Of the refs only `ref`'s tip is kept.
 */
export async function readAdvertisement(
  lines: AsyncIterable<Buffer | 'flush' | 'delim'>,
  ref: string,
): Promise<Discovered> {
  const reader = new AdvertisementReader(lines);
  let line = await reader.next();
  if (line instanceof Buffer && lineText(line).startsWith('# service=')) {
    for (let n = 0; line !== 'flush'; n++) {
      if (line === undefined || n > MAX_HEADER_LINES)
        throw new ProtocolError('a malformed "# service=" header in the ref advertisement');
      line = await reader.next();
    }
    line = await reader.next();
  }
  const first = line instanceof Buffer ? lineText(line) : undefined;
  if (first === 'version 2') return { version: 2, capabilities: await readCapabilities(reader) };
  const found = await readRefs(reader, first === 'version 1' ? await reader.next() : line, ref);
  return { version: 0, ...found };
}

/** Version 2's capability lines, up to the flush. */
async function readCapabilities(reader: AdvertisementReader): Promise<Capabilities> {
  const capabilities = new Map<string, string>();
  let line = await reader.next(MAX_CAPABILITY_BYTES);
  for (; line instanceof Buffer; line = await reader.next()) addCapability(capabilities, lineText(line));
  await reader.drain();
  return capabilities;
}

/** Version 0's ref lines from `line` on, up to the flush: `ref`'s tip and the capabilities. */
async function readRefs(
  reader: AdvertisementReader,
  from: Buffer | 'flush' | 'delim' | undefined,
  ref: string,
): Promise<{ capabilities: V0Capabilities; tip: string | undefined }> {
  let capabilities: Map<string, string> | undefined;
  let tip: string | undefined;
  let line = from;
  for (; line instanceof Buffer; line = await reader.next()) {
    const nul = line.indexOf(0);
    const text = lineText(nul < 0 ? line : line.subarray(0, nul));
    const space = text.indexOf(' ');
    const oid = text.slice(0, space);
    if (space !== 40 || !OID.test(oid))
      throw new ProtocolError(`a malformed ref advertisement line ${JSON.stringify(text.slice(0, 80))}`);
    if (capabilities === undefined) {
      capabilities = new Map();
      const words = nul < 0 ? [] : lineText(line.subarray(nul + 1)).split(' ');
      for (const word of words) if (word !== '') addCapability(capabilities, word);
    }
    if (text.slice(space + 1) === ref) tip = oid;
  }
  if (line !== 'flush') throw new ProtocolError('the ref advertisement ended before its flush');
  await reader.drain();
  return { capabilities: capabilities ?? new Map(), tip };
}

/** "b=c" → b → 'c'; "a" → a → ''. */
function addCapability(capabilities: Map<string, string>, word: string): void {
  const eq = word.indexOf('=');
  capabilities.set(eq < 0 ? word : word.slice(0, eq), eq < 0 ? '' : word.slice(eq + 1));
}

/** Janus names objects by SHA-1 (its indexer, its caches): a SHA-256 repository is refused. */
function expectSha1(format: string | undefined): void {
  if (format !== undefined && format !== 'sha1')
    throw new ProtocolError(
      `the repository names its objects by ${format}; Janus reads repositories of SHA-1 object names only`,
    );
}

/** The advertisement's lines, counted against its bound; ERR lines thrown. */
class AdvertisementReader {
  readonly #lines: AsyncIterator<Buffer | 'flush' | 'delim'>;
  #bytes = 0;
  #limit = MAX_V0_ADVERTISEMENT_BYTES;

  constructor(lines: AsyncIterable<Buffer | 'flush' | 'delim'>) {
    this.#lines = lines[Symbol.asyncIterator]();
  }

  /** The next line, undefined at the end; `limit`: from now on, the bound on all read. */
  async next(limit?: number): Promise<Buffer | 'flush' | 'delim' | undefined> {
    if (limit !== undefined) this.#limit = this.#bytes + limit;
    const { done, value } = await this.#lines.next();
    if (done) return undefined;
    if (value instanceof Buffer) {
      this.#bytes += value.length + 4;
      if (this.#bytes > this.#limit)
        throw new ProtocolError(`the server's ref advertisement is longer than ${this.#limit} bytes`);
      if (value.subarray(0, 4).toString('latin1') === 'ERR ')
        throw new ProtocolError(`the server refused the request: ${lineText(value.subarray(4))}`);
    }
    return value;
  }

  /** Reads what follows the advertisement (nothing, from git), so the connection can be reused. */
  async drain(): Promise<void> {
    while ((await this.next()) !== undefined);
  }
}
