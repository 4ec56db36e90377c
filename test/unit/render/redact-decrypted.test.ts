/**
 * Decrypted values redacted from what people read (a failed render's message, `janus plan`'s
 * output): in every form a tool's message or a YAML diff quotes them.
 */
import { describe, expect, it } from 'vitest';
import {
  type DecryptedInput,
  decryptedRedactor,
  redactDecrypted,
} from '../../../src/render/decrypt-inputs.ts';

const input = (...values: string[]): DecryptedInput => ({
  file: 'deploy/app/secret.yaml',
  values,
  text: values.join('\n'),
  recipients: [],
});

describe('redactDecrypted', () => {
  it("redacts a value as it is, as kustomize's %q quotes it, and line by line", () => {
    const value = 'tok"en-5f2a\nline2-9c1e';
    // What kustomize said of a patch named after the value (run against kustomize 5).
    const message = `no resource matches strategic merge patch "Secret.v1.[noGrp]/tok\\"en-5f2a\\nline2-9c1e.[noNs]": no matches for Id Secret.v1.[noGrp]/${value}.[noNs]`;
    const out = redactDecrypted(message, [input(value)]);
    expect(out).toBe(
      'no resource matches strategic merge patch "Secret.v1.[noGrp]/(decrypted).[noNs]": no matches for Id Secret.v1.[noGrp]/(decrypted).[noNs]',
    );
    // A YAML diff prints a value of several lines one line at a time.
    expect(redactDecrypted('+    a: |-\n+      tok"en-5f2a\n+      line2-9c1e\n', [input(value)])).toBe(
      '+    a: |-\n+      (decrypted)\n+      (decrypted)\n',
    );
  });

  it('redacts it base64-encoded, the longest value first, and leaves values under 4 characters', () => {
    const redact = decryptedRedactor([input('hunter22', 'hunter22-and-more', 'abc')]);
    expect(redact(`token ${Buffer.from('hunter22').toString('base64')}`)).toBe('token (decrypted)');
    expect(redact('hunter22-and-more; hunter22; abc')).toBe('(decrypted); (decrypted); abc');
    // A value in the word that replaces it is not replaced inside it.
    expect(redactDecrypted('crypt hunter22', [input('crypt', 'hunter22')])).toBe('(decrypted) (decrypted)');
    expect(decryptedRedactor([])('anything')).toBe('anything');
  });
});
