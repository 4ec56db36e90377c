/**
 * Discovery's ref advertisement, in each form a server sends it (src/git/upload-pack.ts), and
 * the request a fetch sends a server that speaks only protocol version 0 or 1
 * (src/git/upload-pack-v0.ts).
 */
import { describe, expect, it } from 'vitest';
import { FLUSH, pktLine } from '../../../src/git/receive-pack-protocol.ts';
import { MAX_V0_ADVERTISEMENT_BYTES, readAdvertisement } from '../../../src/git/upload-pack.ts';
import { v0FetchBody } from '../../../src/git/upload-pack-v0.ts';
import { pktLines } from '../../../src/git/upload-pack-wire.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const MAIN = 'refs/heads/main';
const SERVICE = [pktLine('# service=git-upload-pack\n'), FLUSH];

/** The advertisement made of `parts`, streamed in chunks of `chunk` bytes. */
function advertise(parts: Buffer[], chunk = 7) {
  const body = Buffer.concat(parts);
  return pktLines(
    (async function* () {
      for (let at = 0; at < body.length; at += chunk) yield body.subarray(at, at + chunk);
    })(),
  );
}

const refLine = (oid: string, name: string, capabilities?: string) =>
  pktLine(`${oid} ${name}${capabilities === undefined ? '' : `\0${capabilities}`}\n`);

describe('reading the ref advertisement', () => {
  it('reads version 2 capabilities, with or without the "# service=" header before them', async () => {
    const v2 = [
      pktLine('version 2\n'),
      pktLine('ls-refs=unborn\n'),
      pktLine('fetch=shallow wait-for-done\n'),
      FLUSH,
    ];
    for (const parts of [v2, [...SERVICE, ...v2]]) {
      expect(await readAdvertisement(advertise(parts), MAIN)).toEqual({
        version: 2,
        capabilities: new Map([
          ['ls-refs', 'unborn'],
          ['fetch', 'shallow wait-for-done'],
        ]),
      });
    }
  });

  it("reads version 0's refs for the one asked about, and the first line's capabilities", async () => {
    const found = await readAdvertisement(
      advertise([
        ...SERVICE,
        refLine(A, 'HEAD', 'multi_ack side-band-64k shallow agent=git/2.47.0 symref=HEAD:refs/heads/main'),
        refLine(B, 'refs/heads/feature'),
        refLine(A, MAIN),
        refLine(B, 'refs/tags/v1'),
        refLine(A, 'refs/tags/v1^{}'),
        FLUSH,
      ]),
      MAIN,
    );
    expect(found).toEqual({
      version: 0,
      tip: A,
      capabilities: new Map([
        ['multi_ack', ''],
        ['side-band-64k', ''],
        ['shallow', ''],
        ['agent', 'git/2.47.0'],
        ['symref', 'HEAD:refs/heads/main'],
      ]),
    });
    // Version 1 says so first; an empty repository advertises its capabilities on a placeholder.
    const v1 = await readAdvertisement(
      advertise([...SERVICE, pktLine('version 1\n'), refLine(B, MAIN, 'shallow'), FLUSH]),
      MAIN,
    );
    expect(v1).toMatchObject({ version: 0, tip: B });
    const empty = await readAdvertisement(
      advertise([...SERVICE, refLine('0'.repeat(40), 'capabilities^{}', 'side-band-64k'), FLUSH]),
      MAIN,
    );
    expect(empty).toMatchObject({ version: 0, tip: undefined });
  });

  it("throws the server's ERR line, a malformed line and an advertisement cut short", async () => {
    await expect(readAdvertisement(advertise([pktLine('ERR access denied\n')]), MAIN)).rejects.toThrow(
      'the server refused the request: access denied',
    );
    await expect(readAdvertisement(advertise([...SERVICE, pktLine('hello\n'), FLUSH]), MAIN)).rejects.toThrow(
      'a malformed ref advertisement line "hello"',
    );
    await expect(readAdvertisement(advertise([...SERVICE, refLine(A, MAIN, '')]), MAIN)).rejects.toThrow(
      'the ref advertisement ended before its flush',
    );
  });

  it('keeps nothing of a long advertisement but the ref asked about, and stops past its bound', async () => {
    const many = Array.from({ length: 2_000 }, (_, i) => refLine(B, `refs/tags/t${i}`));
    const found = await readAdvertisement(
      advertise([...SERVICE, refLine(B, 'HEAD', 'shallow'), ...many, refLine(A, MAIN), FLUSH], 65_536),
      MAIN,
    );
    expect(found).toMatchObject({ version: 0, tip: A });
    const line = refLine(B, `refs/tags/${'t'.repeat(60_000)}`);
    const endless = pktLines(
      (async function* () {
        yield Buffer.concat([...SERVICE, refLine(B, 'HEAD', 'shallow')]);
        for (;;) yield line;
      })(),
    );
    await expect(readAdvertisement(endless, MAIN)).rejects.toThrow(
      `the server's ref advertisement is longer than ${MAX_V0_ADVERTISEMENT_BYTES} bytes`,
    );
  });
});

describe('the version 0 fetch request', () => {
  const offered = new Map([
    ['side-band-64k', ''],
    ['ofs-delta', ''],
    ['shallow', ''],
    ['deepen-relative', ''],
    ['no-progress', ''],
    ['thin-pack', ''],
    ['multi_ack_detailed', ''],
  ]);
  const text = (body: Buffer) => body.toString('latin1');

  it('asks in one round: wants and capabilities, shallow commits, depth, flush, haves, done', () => {
    const body = v0FetchBody(
      { want: A, haves: [B], shallow: new Set([B]), deepen: { depth: 2, relative: true } },
      offered,
    );
    expect(text(body)).toBe(
      [
        `006ewant ${A} side-band-64k ofs-delta no-progress shallow deepen-relative\n`,
        `0035shallow ${B}\n`,
        '000ddeepen 2\n',
        '0000',
        `0032have ${B}\n`,
        '0009done\n',
      ].join(''),
    );
    // Never a thin pack (its bases are not in it) nor multi_ack (one round, "done" at once).
    expect(text(body)).not.toMatch(/thin-pack|multi_ack/);
    expect(text(v0FetchBody({ want: A, haves: [], shallow: new Set() }, new Map([['side-band', '']])))).toBe(
      `003cwant ${A} side-band\n00000009done\n`,
    );
  });

  it('names what the server lacks that the fetch needs', () => {
    const without = (name: string) => new Map([...offered].filter(([key]) => key !== name));
    const deepen = { want: A, haves: [A], shallow: new Set([B]), deepen: { depth: 5, relative: true } };
    expect(() =>
      v0FetchBody(deepen, new Map([...without('side-band-64k')].filter(([k]) => k !== 'side-band'))),
    ).toThrow('the server offers no side-band (side-band-64k), through which Janus receives packs');
    expect(() => v0FetchBody(deepen, without('shallow'))).toThrow(/does not offer shallow fetches/);
    expect(() => v0FetchBody(deepen, without('deepen-relative'))).toThrow(/capability "deepen-relative"/);
    // A fetch into a cache that is not shallow needs neither.
    expect(() => v0FetchBody({ want: A, haves: [B], shallow: new Set() }, without('shallow'))).not.toThrow();
  });
});
