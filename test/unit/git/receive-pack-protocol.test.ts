/** The receive-pack protocol's bytes (receive-pack-protocol.ts), as git http-backend writes them. */
import { describe, expect, it } from 'vitest';
import {
  FLUSH,
  ProtocolError,
  parseAdvertisement,
  parseReportStatus,
  pktLine,
  requestCapabilities,
  updateCommand,
} from '../../../src/git/receive-pack-protocol.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const ZERO = '0'.repeat(40);
const CAPS =
  'report-status report-status-v2 delete-refs side-band-64k quiet atomic ofs-delta object-format=sha1 agent=git/2.43.0';
const body = (...lines: (string | null)[]) =>
  Buffer.concat(lines.map((line) => (line === null ? FLUSH : pktLine(line))));

describe('parseAdvertisement', () => {
  it('reads the refs and the capabilities after the service line', () => {
    const ad = parseAdvertisement(
      body(
        '# service=git-receive-pack\n',
        null,
        `${A} refs/heads/janus/results\0${CAPS}\n`,
        `${B} refs/heads/main\n`,
        null,
      ),
    );
    expect([...ad.refs]).toEqual([
      ['refs/heads/janus/results', A],
      ['refs/heads/main', B],
    ]);
    expect(ad.capabilities.has('report-status')).toBe(true);
    expect(ad.capabilities.has('agent=git/2.43.0')).toBe(true);
  });

  it('reads an empty repository: no refs, the capabilities on capabilities^{}', () => {
    const ad = parseAdvertisement(
      body('# service=git-receive-pack\n', null, `${ZERO} capabilities^{}\0${CAPS}\n`, null),
    );
    expect(ad.refs.size).toBe(0);
    expect(ad.capabilities.has('report-status')).toBe(true);
  });

  it('refuses what is not an advertisement of receive-pack', () => {
    expect(() => parseAdvertisement(Buffer.from('<html>sign in</html>'))).toThrow(ProtocolError);
    expect(() =>
      parseAdvertisement(body('# service=git-upload-pack\n', null, `${A} HEAD\0${CAPS}\n`, null)),
    ).toThrow('another service');
    expect(() =>
      parseAdvertisement(body('# service=git-receive-pack\n', null, `${A} refs/heads/x\0x\n`)),
    ).toThrow('flush');
    expect(() => parseAdvertisement(Buffer.from('00'))).toThrow(ProtocolError);
  });
});

describe('updateCommand', () => {
  it('names the old tip (zeros for a new branch), the new one, and the capabilities, then a flush', () => {
    expect(updateCommand('refs/heads/r', A, B, ['report-status']).toString('latin1')).toBe(
      `0071${A} ${B} refs/heads/r\0report-status\n0000`,
    );
    expect(
      updateCommand('refs/heads/r', undefined, B, ['report-status', 'agent=janus']).toString('latin1'),
    ).toBe(`007d${ZERO} ${B} refs/heads/r\0report-status agent=janus\n0000`);
  });

  it('asks for report-status, and sends its agent only to a server that names its own', () => {
    expect(requestCapabilities(new Set(CAPS.split(' ')))).toEqual(['report-status', 'agent=janus']);
    expect(requestCapabilities(new Set(['report-status']))).toEqual(['report-status']);
  });
});

describe('parseReportStatus', () => {
  it('reads an accepted update', () => {
    const report = parseReportStatus(body('unpack ok\n', 'ok refs/heads/r\n', null));
    expect(report.unpack).toBe('ok');
    expect([...report.refs]).toEqual([['refs/heads/r', undefined]]);
  });

  it('reads a refused one with its reason, and an unpack failure', () => {
    const report = parseReportStatus(body('unpack ok\n', 'ng refs/heads/r non-fast-forward\n', null));
    expect(report.refs.get('refs/heads/r')).toBe('non-fast-forward');
    const failed = parseReportStatus(
      body('unpack index-pack abnormal exit\n', 'ng refs/heads/r unpacker error\n', null),
    );
    expect(failed.unpack).toBe('index-pack abnormal exit');
  });

  it('refuses a reply without a report', () => {
    expect(() => parseReportStatus(Buffer.alloc(0))).toThrow(ProtocolError);
    expect(() => parseReportStatus(body('ok refs/heads/r\n', null))).toThrow('no report-status');
  });
});
