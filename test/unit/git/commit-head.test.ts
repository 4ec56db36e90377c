import { describe, expect, it } from 'vitest';
import { parseCommitStart, TRUNCATED_MESSAGE } from '../../../src/git/commit-head.ts';

const TREE = '1'.repeat(40);
const P1 = '2'.repeat(40);
const P2 = '3'.repeat(40);
const OID = '4'.repeat(40);

const headers = [
  `tree ${TREE}`,
  `parent ${P1}`,
  `parent ${P2}`,
  'author Ann Author <ann@example.com> 1700000000 +0130',
  'committer Cid Committer <cid@example.com> 1700000100 -0500',
  'gpgsig -----BEGIN PGP SIGNATURE-----',
  ' continued',
].join('\n');

describe('a commit read from its start', () => {
  it('has the headers of the whole commit and the start of its message, marked as cut', () => {
    const start = Buffer.from(`${headers}\n\nsubject\n\nbody aaaa`);
    const commit = parseCommitStart(OID, start, start.length + 1_000_000, 65536);
    expect(commit).toEqual({
      oid: OID,
      tree: TREE,
      parents: [P1, P2],
      // isomorphic-git's sign: minutes west of UTC
      author: { name: 'Ann Author', email: 'ann@example.com', timestamp: 1700000000, timezoneOffset: -90 },
      committer: {
        name: 'Cid Committer',
        email: 'cid@example.com',
        timestamp: 1700000100,
        timezoneOffset: 300,
      },
      message: `subject\n\nbody aaaa${TRUNCATED_MESSAGE}`,
    });
  });

  it('keeps a message that was read whole as it is', () => {
    const start = Buffer.from(`${headers}\n\nsubject\n`);
    expect(parseCommitStart(OID, start, start.length, 65536).message).toBe('subject\n');
  });

  it('refuses a commit whose headers alone are longer than what is read', () => {
    const start = Buffer.from(`${headers}\n${'mergetag x\n'.repeat(10)}`);
    expect(() => parseCommitStart(OID, start, 10_000_000, 65536)).toThrow(
      `commit ${OID} is 10000000 bytes, more than the 65536 bytes its headers may take; it was not read`,
    );
  });
});
