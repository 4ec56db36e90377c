/** The allowed-signers file as a mount: re-read each time, parsed again only when it changed, never guessed. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AllowedSignersError, allowedSignersFile } from '../../../src/git/allowed-signers-file.ts';
import { isExpectedError } from '../../../src/log/describe-error.ts';
import { makeKey, signerLine } from '../../support/git/ssh-signing.ts';

describe('the allowed-signers file', () => {
  const key = makeKey('ed25519', 'k');

  it('says when its text changed, and reads the new one', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'janus-signers-')), 'allowed_signers');
    writeFileSync(path, `${signerLine('a@example.com', key)}\n`);
    const source = allowedSignersFile(path);
    expect((await source.read()).changed).toBe(true);
    const again = await source.read();
    expect([again.changed, again.signers.signers.length]).toEqual([false, 1]);
    writeFileSync(path, `${signerLine('a@example.com', key)}\n${signerLine('b@example.com', key)}\n`);
    const edited = await source.read();
    expect([edited.changed, edited.signers.signers.length]).toEqual([true, 2]);
  });

  it('fails, as an expected error naming the file, when it cannot be read', async () => {
    const source = allowedSignersFile('/nonexistent/allowed_signers');
    const error = await source.read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AllowedSignersError);
    expect((error as Error).message).toBe(
      'cannot read the allowed signers file /nonexistent/allowed_signers (ENOENT)',
    );
    expect(isExpectedError(error)).toBe(true);
  });
});
