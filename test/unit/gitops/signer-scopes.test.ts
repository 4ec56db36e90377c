/** --signer-namespaces: which namespaces a signer may sign transactions for. */
import { describe, expect, it } from 'vitest';
import { signerScopes, UNSCOPED } from '../../../src/gitops/signer-scopes.ts';

describe('signer scopes', () => {
  const scopes = signerScopes([
    'alice@example.com=shop',
    'alice@example.com=billing',
    '*@ops.example.com=infra',
    '',
  ]);

  it('lets a named principal sign only for its namespaces', () => {
    expect(scopes.allows(['alice@example.com'], 'shop')).toBe(true);
    expect(scopes.allows(['alice@example.com'], 'billing')).toBe(true);
    expect(scopes.allows(['alice@example.com'], 'infra')).toBe(false);
  });

  it('matches a pattern principal as written, and leaves unnamed principals unrestricted', () => {
    expect(scopes.allows(['*@ops.example.com'], 'infra')).toBe(true);
    expect(scopes.allows(['*@ops.example.com'], 'shop')).toBe(false);
    expect(scopes.allows(['bob@example.com'], 'infra')).toBe(true);
    // A key listed for two principals, one of them unrestricted: it may sign anywhere.
    expect(scopes.allows(['alice@example.com', 'bob@example.com'], 'infra')).toBe(true);
    expect(UNSCOPED.allows(['anyone'], 'anywhere')).toBe(true);
  });

  it('refuses entries that are not principal=namespace', () => {
    expect(() => signerScopes(['alice@example.com'])).toThrow('expected principal=namespace');
    expect(() => signerScopes(['=shop'])).toThrow('expected principal=namespace');
    expect(() => signerScopes(['alice@example.com=Shop_1'])).toThrow('"alice@example.com=Shop_1": namespace');
  });
});
