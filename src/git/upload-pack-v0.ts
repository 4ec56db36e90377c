/**
 * Fetching in Git's protocol version 0 or 1 over smart HTTP (gitprotocol-http(5),
 * gitprotocol-pack(5)), for servers that do not speak version 2: the branch's tip comes from the
 * ref advertisement discovery already read (upload-pack.ts), and one POST fetches, with "done"
 * at once (no rounds of negotiation: the one "have" is the tracking ref's tip). The answer is
 * the shallow commits (when deepening), an ACK or NAK, then the pack on side-band 1, streamed to
 * a file like version 2's. Two requests for a poll that finds new commits, one for one that
 * finds none.
 */
import type { GitHttpResponse } from 'isomorphic-git';
import { FLUSH, ProtocolError, pktLine } from './receive-pack-protocol.ts';
import {
  type FetchedPack,
  type FetchRequest,
  lineText,
  pktLines,
  postUploadPack,
  shallowInfoLine,
  sideBandLine,
  type UploadPackEndpoint,
  writePackFile,
} from './upload-pack-wire.ts';

/** What a version 0 or 1 server offers, from its first ref line: "agent=git/2.x" gives "git/2.x". */
export type V0Capabilities = ReadonlyMap<string, string>;

/** Capabilities Janus asks for when the server offers them, besides a side-band. */
const OPTIONAL = ['ofs-delta', 'no-progress'];

/**
 * The request that fetches `request.want` in one round: the wants and the capabilities asked
 * for, the shallow commits, the depth, a flush, the haves, "done". Throws ProtocolError naming
 * what the server lacks that the request needs.
 */
export function v0FetchBody(request: FetchRequest, capabilities: V0Capabilities): Buffer {
  const band = ['side-band-64k', 'side-band'].find((name) => capabilities.has(name));
  if (band === undefined)
    throw new ProtocolError(
      'the server offers no side-band (side-band-64k), through which Janus receives packs',
    );
  const shallow = request.shallow.size > 0 || request.deepen !== undefined;
  if (shallow && !capabilities.has('shallow'))
    throw new ProtocolError(
      'the server does not offer shallow fetches (capability "shallow"): Janus fetches the tip of a branch, and deepens it on demand',
    );
  const relative = request.deepen?.relative === true;
  if (relative && !capabilities.has('deepen-relative'))
    throw new ProtocolError(
      'the server does not offer to deepen a shallow history (capability "deepen-relative")',
    );
  const asked = [
    band,
    ...OPTIONAL.filter((name) => capabilities.has(name)),
    ...(shallow ? ['shallow'] : []),
    ...(relative ? ['deepen-relative'] : []),
  ];
  return Buffer.concat([
    pktLine(`want ${request.want} ${asked.join(' ')}\n`),
    ...[...request.shallow].map((oid) => pktLine(`shallow ${oid}\n`)),
    ...(request.deepen ? [pktLine(`deepen ${request.deepen.depth}\n`)] : []),
    FLUSH,
    ...request.haves.map((oid) => pktLine(`have ${oid}\n`)),
    pktLine('done\n'),
  ]);
}

/** Fetches `request.want` from a version 0 or 1 server, writing the pack's bytes to `packFile`. */
export async function fetchPackV0(
  endpoint: UploadPackEndpoint,
  capabilities: V0Capabilities,
  request: FetchRequest,
  packFile: string,
): Promise<FetchedPack> {
  const res = await postUploadPack(endpoint, v0FetchBody(request, capabilities), false);
  const result: FetchedPack = { shallow: [], unshallow: [], packBytes: 0 };
  result.packBytes = await writePackFile(packFile, (onPack) =>
    readV0Response(res, request.deepen !== undefined, result, onPack),
  );
  return result;
}

/**
 * The answer: shallow-info up to a flush when a depth was asked for, then ACK or NAK lines, then
 * the pack's side-band up to the final flush.
 */
async function readV0Response(
  res: GitHttpResponse,
  deepen: boolean,
  result: FetchedPack,
  onPack: (data: Buffer) => Promise<void>,
): Promise<void> {
  let phase: 'shallow' | 'acknowledgments' | 'pack' = deepen ? 'shallow' : 'acknowledgments';
  for await (const line of pktLines(res.body)) {
    if (line === 'delim') throw new ProtocolError('a delimiter in a protocol version 0 fetch response');
    if (phase === 'shallow') {
      if (line === 'flush') phase = 'acknowledgments';
      else shallowInfoLine(line, result);
      continue;
    }
    // A flush before any pack: the server sent none (the connectivity check says what lacks).
    if (line === 'flush') return;
    if (phase === 'acknowledgments' && !isBand(line[0])) {
      const text = lineText(line);
      if (text.startsWith('ERR ')) throw new ProtocolError(`the server refused the fetch: ${text.slice(4)}`);
      if (text !== 'NAK' && !text.startsWith('ACK '))
        throw new ProtocolError(
          `an unexpected line ${JSON.stringify(text.slice(0, 80))} in the fetch response`,
        );
      continue;
    }
    phase = 'pack';
    await sideBandLine(line, onPack);
  }
  throw new ProtocolError('the fetch response ended before its final flush');
}

function isBand(byte: number | undefined): boolean {
  return byte === 1 || byte === 2 || byte === 3;
}
