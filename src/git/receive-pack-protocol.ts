/**
 * The receive-pack side of Git's smart HTTP protocol, as pure functions over bytes
 * (gitprotocol-http(5), gitprotocol-pack(5)): the refs a server advertises, the request that
 * updates one ref, and the server's report-status. Lines are pkt-lines: four hex digits of
 * length (those four included), then the data; "0000" is a flush.
 */
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { ZERO_OID } from './object-store.ts';

export interface Advertisement {
  /** Full ref name → oid. */
  readonly refs: ReadonlyMap<string, string>;
  readonly capabilities: ReadonlySet<string>;
}

export interface ReportStatus {
  /** "ok", or the server's reason the pack could not be unpacked. */
  readonly unpack: string;
  /** Full ref name → undefined when updated, else the server's reason it was not. */
  readonly refs: ReadonlyMap<string, string | undefined>;
}

/**
 * A reply the protocol does not allow, or a push the server could not take (its words): the
 * server's doing, not a bug here, so it is reported in one line.
 */
export class ProtocolError extends Error {
  readonly [EXPECTED_ERROR] = true;
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

const OID = /^[0-9a-f]{40}$/;

/** Splits pkt-lines; a flush is `null`. Throws ProtocolError on a malformed length. */
export function splitPktLines(data: Uint8Array): (Buffer | null)[] {
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const lines: (Buffer | null)[] = [];
  for (let at = 0; at < buffer.length; ) {
    const hex = buffer.toString('latin1', at, at + 4);
    const length = /^[0-9a-f]{4}$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
    if (length === 0) {
      lines.push(null);
      at += 4;
    } else if (length >= 4 && at + length <= buffer.length) {
      lines.push(buffer.subarray(at + 4, at + length));
      at += length;
    } else {
      throw new ProtocolError(`malformed pkt-line at byte ${at} (${JSON.stringify(hex)})`);
    }
  }
  return lines;
}

export function pktLine(text: string): Buffer {
  const data = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, '0'), 'latin1'), data]);
}

export const FLUSH = Buffer.from('0000', 'latin1');

/**
 * The body of GET info/refs?service=git-receive-pack: "# service=git-receive-pack", a flush,
 * then one ref a line, the first carrying the capabilities after a NUL (an empty repository
 * advertises "capabilities^{}" with the zero id), then a flush.
 */
export function parseAdvertisement(body: Uint8Array): Advertisement {
  const lines = splitPktLines(body);
  let at = 0;
  if (lines[0]?.toString('utf8').startsWith('# service=')) {
    if (lines[0].toString('utf8').trimEnd() !== '# service=git-receive-pack')
      throw new ProtocolError(`advertisement for another service: ${lines[0].toString('utf8').trim()}`);
    at = lines[1] === null ? 2 : 1;
  }
  const refs = new Map<string, string>();
  let capabilities = new Set<string>();
  for (let first = true; at < lines.length; at++, first = false) {
    const line = lines[at];
    if (line === null || line === undefined) break;
    let text = line.toString('utf8').replace(/\n$/, '');
    if (first) {
      const nul = text.indexOf('\0');
      if (nul < 0) throw new ProtocolError('the first advertised ref carries no capabilities');
      capabilities = new Set(
        text
          .slice(nul + 1)
          .split(' ')
          .filter(Boolean),
      );
      text = text.slice(0, nul);
    }
    const space = text.indexOf(' ');
    const oid = text.slice(0, space);
    const name = text.slice(space + 1);
    if (space !== 40 || !OID.test(oid)) throw new ProtocolError(`not a ref line: ${JSON.stringify(text)}`);
    if (name !== 'capabilities^{}') refs.set(name, oid);
  }
  if (lines[at] !== null) throw new ProtocolError('the advertisement does not end with a flush');
  return { refs, capabilities };
}

/** The capabilities asked for: report-status always; agent only where the server names its own. */
export function requestCapabilities(advertised: ReadonlySet<string>): string[] {
  const agent = [...advertised].some((c) => c.startsWith('agent=')) ? ['agent=janus'] : [];
  return ['report-status', ...agent];
}

/**
 * The commands of a push that moves `ref` from `old` (undefined: it must not exist) to `new`:
 * the server updates the ref only if it still points at `old`, so a push never overwrites a tip
 * it did not see. The pack follows.
 */
export function updateCommand(
  ref: string,
  old: string | undefined,
  next: string,
  capabilities: readonly string[],
): Buffer {
  return Buffer.concat([pktLine(`${old ?? ZERO_OID} ${next} ${ref}\0${capabilities.join(' ')}\n`), FLUSH]);
}

/** "unpack ok|<reason>", then "ok <ref>" or "ng <ref> <reason>" per ref, then a flush. */
export function parseReportStatus(body: Uint8Array): ReportStatus {
  const lines = splitPktLines(body);
  const first = lines[0]?.toString('utf8').replace(/\n$/, '');
  if (first === undefined || !first.startsWith('unpack '))
    throw new ProtocolError(`no report-status in the reply (${JSON.stringify(first ?? '')})`);
  const refs = new Map<string, string | undefined>();
  for (const line of lines.slice(1)) {
    if (line === null) break;
    const text = line.toString('utf8').replace(/\n$/, '');
    if (text.startsWith('ok ')) refs.set(text.slice(3), undefined);
    else if (text.startsWith('ng ')) {
      const space = text.indexOf(' ', 3);
      refs.set(
        space < 0 ? text.slice(3) : text.slice(3, space),
        space < 0 ? 'no reason given' : text.slice(space + 1),
      );
    } else throw new ProtocolError(`unexpected report-status line: ${JSON.stringify(text)}`);
  }
  return { unpack: first.slice('unpack '.length), refs };
}
