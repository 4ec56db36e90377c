/** git's allowed-signers file, as `man ssh-keygen` (ALLOWED SIGNERS) writes it. */
import { describe, expect, it } from 'vitest';
import { parseAllowedSigners, parseSshTime } from '../../../src/git/allowed-signers.ts';
import { makeKey } from '../../support/git/ssh-signing.ts';

describe('the allowed signers file', () => {
  const key = makeKey('ed25519', 'k').publicKey.split(' ').slice(0, 2).join(' ');
  const rsa = makeKey('rsa', 'r').publicKey.split(' ').slice(0, 2).join(' ');

  it('reads principals, quoted options with commas inside, validity and a trailing comment', () => {
    const { signers, problems } = parseAllowedSigners(
      [
        '# comment',
        '',
        `"alice@example.com,bob@example.com" namespaces="git,file",valid-after="20240101",valid-before="20260101Z" ${key} laptop key`,
        `  *@ops.example.com ${rsa}`,
      ].join('\n'),
    );
    expect(problems).toEqual([]);
    expect(signers.map((s) => [s.line, s.principals, s.namespaces, s.validBefore, s.key.type])).toEqual([
      [3, ['alice@example.com', 'bob@example.com'], ['git', 'file'], Date.UTC(2026, 0, 1), 'ssh-ed25519'],
      [4, ['*@ops.example.com'], undefined, undefined, 'ssh-rsa'],
    ]);
    expect(signers[0]?.validAfter).toBe(new Date(2024, 0, 1).getTime()); // no Z: local time, as ssh-keygen
  });

  it('names each line it cannot use, and why', () => {
    const { signers, problems } = parseAllowedSigners(
      [
        `a@x ssh-rsa ${key.split(' ')[1]}`,
        `b@x valid-before="2026" ${key}`,
        `c@x sk-ssh-ed25519@openssh.com ${key.split(' ')[1]}`,
      ].join('\n'),
    );
    expect(signers).toEqual([]);
    expect(problems).toEqual([
      'line 1: the key is of type ssh-ed25519, the line says ssh-rsa',
      'line 2: invalid time "2026" (YYYYMMDD[HHMM[SS]][Z])',
      'line 3: the key is of type ssh-ed25519, the line says sk-ssh-ed25519@openssh.com',
    ]);
  });

  it('reads ssh-keygen times to the second', () => {
    expect(parseSshTime('20250102030405Z')).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(parseSshTime('202501020304Z')).toBe(Date.UTC(2025, 0, 2, 3, 4));
  });
});
