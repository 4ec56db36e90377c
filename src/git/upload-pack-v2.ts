/**
 * Fetching in Git's protocol version 2 (gitprotocol-v2(5)): the branch's tip through ls-refs
 * with its name as prefix, then one fetch whose pack goes straight to a file. Three requests for
 * a poll that finds new commits (with discovery, upload-pack.ts), two for one that finds none.
 */
import type { GitHttpResponse } from 'isomorphic-git';
import { FLUSH, ProtocolError, pktLine } from './receive-pack-protocol.ts';
import { readBody } from './smart-http.ts';
import {
  type FetchedPack,
  type FetchRequest,
  OID,
  pktLines,
  postUploadPack,
  shallowInfoLine,
  sideBandLine,
  type UploadPackEndpoint,
  writePackFile,
} from './upload-pack-wire.ts';

/** What a version 2 server offers: "fetch=shallow" gives the `fetch` key the value "shallow". */
export type Capabilities = ReadonlyMap<string, string>;

/** Refs under one branch's name, one line each. */
const MAX_LS_REFS_BYTES = 16 * 1024 * 1024;

/** A version 2 server that lists refs and fetches shallow: what Janus asks of one. */
export function servesJanus(capabilities: Capabilities): boolean {
  if (!capabilities.has('ls-refs')) return false;
  return (capabilities.get('fetch') ?? '').split(' ').includes('shallow');
}

/** The refs whose names start with `prefix`, name → oid. */
export async function lsRefs(endpoint: UploadPackEndpoint, prefix: string): Promise<Map<string, string>> {
  const res = await post(endpoint, 'ls-refs', [`ref-prefix ${prefix}`]);
  const refs = new Map<string, string>();
  for (const line of textLines(await readBody(res, MAX_LS_REFS_BYTES))) {
    const [oid = '', name = ''] = line.split(' ');
    if (!OID.test(oid) || name === '')
      throw new ProtocolError(`a malformed ls-refs line ${JSON.stringify(line)}`);
    refs.set(name, oid);
  }
  return refs;
}

/** Fetches `request.want`, writing the pack's bytes to `packFile`. */
export async function fetchPackV2(
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
  const result: FetchedPack = { shallow: [], unshallow: [], packBytes: 0 };
  result.packBytes = await writePackFile(packFile, (onPack) => readFetchResponse(res, result, onPack));
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
  for await (const line of pktLines(res.body)) {
    if (line === 'flush') return;
    if (line === 'delim') section = undefined;
    else if (section === 'packfile') await sideBandLine(line, onPack);
    else if (section === 'shallow-info') shallowInfoLine(line, result);
    else if (section === undefined) {
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

async function post(endpoint: UploadPackEndpoint, name: string, args: string[]): Promise<GitHttpResponse> {
  const body = Buffer.concat([
    pktLine(`command=${name}\n`),
    Buffer.from('0001', 'latin1'),
    ...args.map((a) => pktLine(`${a}\n`)),
    FLUSH,
  ]);
  return postUploadPack(endpoint, body, true);
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
