import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../../src/webhook/index.ts';

const secret = 'topsecret';
const body = Buffer.from('{"ref":"refs/heads/main"}');
const hex = createHmac('sha256', secret).update(body).digest('hex');

describe('verifySignature', () => {
  it('accepts each provider’s documented header format', () => {
    expect(verifySignature('github', { 'x-hub-signature-256': `sha256=${hex}` }, body, secret)).toBe('valid');
    expect(verifySignature('gitea', { 'x-gitea-signature': hex }, body, secret)).toBe('valid');
    expect(verifySignature('gitea', { 'x-forgejo-signature': hex }, body, secret)).toBe('valid');
    expect(verifySignature('gitlab', { 'x-gitlab-token': secret }, body, secret)).toBe('valid');
    expect(verifySignature('generic', { 'x-janus-signature': `sha256=${hex}` }, body, secret)).toBe('valid');
    expect(verifySignature('generic', { 'x-hub-signature-256': `sha256=${hex}` }, body, secret)).toBe(
      'valid',
    );
  });

  it('accepts upper-case hex and surrounding whitespace', () => {
    const header = { 'x-hub-signature-256': ` sha256=${hex.toUpperCase()} ` };
    expect(verifySignature('github', header, body, secret)).toBe('valid');
  });

  it('verifies the exact bytes: re-serialized JSON does not match', () => {
    const reformatted = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(verifySignature('github', { 'x-hub-signature-256': `sha256=${hex}` }, reformatted, secret)).toBe(
      'mismatch',
    );
  });

  it('tells a missing header from a malformed one', () => {
    expect(verifySignature('github', {}, body, secret)).toBe('missing');
    expect(verifySignature('gitlab', {}, body, secret)).toBe('missing');
    expect(verifySignature('github', { 'x-hub-signature-256': hex }, body, secret)).toBe('malformed');
    expect(verifySignature('github', { 'x-hub-signature-256': `sha1=${hex}` }, body, secret)).toBe(
      'malformed',
    );
    expect(verifySignature('gitea', { 'x-gitea-signature': hex.slice(2) }, body, secret)).toBe('malformed');
    expect(verifySignature('gitea', { 'x-gitea-signature': `${hex.slice(1)}g` }, body, secret)).toBe(
      'malformed',
    );
  });

  it('does not accept a GitHub prefix on a Gitea signature or the reverse', () => {
    expect(verifySignature('gitea', { 'x-gitea-signature': `sha256=${hex}` }, body, secret)).toBe(
      'malformed',
    );
    expect(verifySignature('github', { 'x-hub-signature-256': `sha256=sha256=${hex}` }, body, secret)).toBe(
      'malformed',
    );
  });

  it('rejects a signature header that was sent twice', () => {
    // node:http joins repeated custom headers with ", ", which is never a valid digest.
    const joined = { 'x-hub-signature-256': `sha256=${hex}, sha256=${hex}` };
    expect(verifySignature('github', joined, body, secret)).toBe('malformed');
    expect(verifySignature('github', { 'x-hub-signature-256': [`sha256=${hex}`] }, body, secret)).toBe(
      'missing',
    );
  });

  it('rejects a GitLab token that differs in length or in one character', () => {
    expect(verifySignature('gitlab', { 'x-gitlab-token': `${secret}x` }, body, secret)).toBe('mismatch');
    expect(verifySignature('gitlab', { 'x-gitlab-token': 'topsecreT' }, body, secret)).toBe('mismatch');
    expect(verifySignature('gitlab', { 'x-gitlab-token': '' }, body, secret)).toBe('mismatch');
  });

  it('treats a Buffer secret like the same string', () => {
    expect(
      verifySignature('github', { 'x-hub-signature-256': `sha256=${hex}` }, body, Buffer.from(secret)),
    ).toBe('valid');
    expect(verifySignature('gitlab', { 'x-gitlab-token': secret }, body, Buffer.from(secret))).toBe('valid');
  });
});
