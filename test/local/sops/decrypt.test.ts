/**
 * Janus's sops reader against files the real sops encrypted (test/support/servers/sops.ts builds it from
 * its Go module): every value as `sops decrypt` reads it, and every change sops would refuse,
 * refused.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { decryptSops } from '../../../src/sops/decrypt.ts';
import { SopsError } from '../../../src/sops/sops-error.ts';
import {
  type AgeKey,
  newAgeKey,
  sopsBinaries,
  sopsDecrypt,
  sopsEncrypt,
} from '../../support/servers/sops.ts';

const SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: web-credentials
  namespace: shop
  labels:
    app: web
type: Opaque
stringData:
  password: correct-horse-battery-staple
  port: 5432
  debug: true
  ratio: 0.25
  empty: ""
  "10": ten
  "9": nine
`;
const K8S_SECRETS = ['--encrypted-regex', '^(data|stringData)$'];

let team: AgeKey;
let other: AgeKey;

beforeAll(async () => {
  sopsBinaries(); // a cold build takes minutes: here, not in a test's timeout
  [team, other] = await Promise.all([newAgeKey(), newAgeKey()]);
}, 600_000);

const refusal = async (promise: Promise<unknown>): Promise<SopsError> => {
  const e = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(SopsError);
  return e as SopsError;
};

describe('decryptSops', () => {
  it('reads a Secret encrypted with encrypted_regex exactly as sops decrypt does', async () => {
    const encrypted = sopsEncrypt(SECRET, { recipients: [team.recipient], flags: K8S_SECRETS });
    expect(encrypted).not.toContain('correct-horse');
    const ours = await decryptSops('shop/10-creds.update.sops.yaml', encrypted, [team.identity]);
    expect(ours).toEqual(parse(sopsDecrypt(encrypted, team.identity)));
    expect(ours).toEqual(parse(SECRET));
  });

  it('reads the selection regexes users write, as sops (Go regexp) matches them', async () => {
    const config = `db:
  host: db.shop
  password: hunter22
  Token: t0k3n
tokens:
  - password-not-here
api_key_2: k2
api_key: k
`;
    for (const [flag, regex] of [
      ['--encrypted-regex', '^(password|token)$'],
      ['--encrypted-regex', '(?i)^(password|token)$'],
      ['--encrypted-regex', '_key(_\\d+)?$'],
      ['--unencrypted-regex', '^(db|host|[a-z]+s)$'],
    ] as const) {
      const encrypted = sopsEncrypt(config, { recipients: [team.recipient], flags: [flag, regex] });
      const ours = await decryptSops('config.sops.yaml', encrypted, [team.identity]);
      expect(ours, regex).toEqual(parse(sopsDecrypt(encrypted, team.identity)));
      expect(ours, regex).toEqual(parse(config));
    }
  });

  it('reads a fully encrypted JSON document with nested mappings and lists', async () => {
    const plain = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { list: ['a', 'b', 7, false, null, { inner: 'x' }], nested: { deep: { n: -12.5 } } },
    });
    const encrypted = sopsEncrypt(plain, { recipients: [team.recipient], format: 'json' });
    const ours = await decryptSops('c.update.sops.json', encrypted, [team.identity]);
    expect(ours).toEqual(JSON.parse(sopsDecrypt(encrypted, team.identity, 'json')));
    expect(ours).toEqual(JSON.parse(plain));
  });

  it('honours unencrypted_suffix and mac_only_encrypted', async () => {
    const suffixed = sopsEncrypt('a: secret\nb_unencrypted: public\n', {
      recipients: [team.recipient],
      flags: ['--unencrypted-suffix', '_unencrypted'],
    });
    expect(suffixed).toContain('b_unencrypted: public');
    expect(await decryptSops('s.yaml', suffixed, [team.identity])).toEqual({
      a: 'secret',
      b_unencrypted: 'public',
    });

    const config = `creation_rules:\n  - age: ${team.recipient}\n    encrypted_regex: ^stringData$\n    mac_only_encrypted: true\n`;
    const macOnly = sopsEncrypt(SECRET, { recipients: [], config });
    expect(macOnly).toContain('mac_only_encrypted: true');
    expect(await decryptSops('m.yaml', macOnly, [team.identity])).toEqual(parse(SECRET));
  });

  it("verifies the MAC over values left in clear in YAML's other forms, as sops (yaml.v3) reads them", async () => {
    const plain = [
      'metadata:',
      '  mode: 0644',
      '  octal: 0o17',
      '  hex: 0x1F',
      '  enabled: true',
      '  ratio: 1.50',
      '  big: 1e3',
      '  tiny: 1.5e-7',
      '  infinite: .inf',
      '  date: 2001-12-14',
      '  nothing: ~',
      '  folded: >',
      '    two',
      '    lines',
      '  list: [a, 1, false, ~, {inner: x}]',
      '  "1": one',
      '  anchored: &a {k: v}',
      '  aliased: *a',
      'secret: hidden',
      '',
    ].join('\n');
    const encrypted = sopsEncrypt(plain, {
      recipients: [team.recipient],
      flags: ['--encrypted-regex', '^secret$'],
    });
    const ours = await decryptSops('forms.yaml', encrypted, [team.identity]);
    expect(ours).toEqual(parse(sopsDecrypt(encrypted, team.identity)));
    // sops itself reads an unquoted date as a timestamp and writes it back as RFC 3339.
    expect(ours).toMatchObject({
      secret: 'hidden',
      metadata: {
        mode: 420,
        ratio: 1.5,
        date: '2001-12-14T00:00:00Z',
        list: ['a', 1, false, null, { inner: 'x' }],
      },
    });
  });

  it('keeps a key named __proto__ as data, never as the prototype', async () => {
    const encrypted = sopsEncrypt('data:\n  __proto__:\n    polluted: yes\n', {
      recipients: [team.recipient],
    });
    const ours = await decryptSops('p.yaml', encrypted, [team.identity]);
    const data = ours.data as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toEqual({ polluted: 'yes' });
  });

  it('opens a file encrypted for several recipients with any one of their keys', async () => {
    const encrypted = sopsEncrypt(SECRET, {
      recipients: [other.recipient, team.recipient],
      flags: K8S_SECRETS,
    });
    expect(await decryptSops('f.yaml', encrypted, [team.identity])).toEqual(parse(SECRET));
  });

  it('refuses without a matching key, naming the file and the recipients, never a value', async () => {
    const encrypted = sopsEncrypt(SECRET, { recipients: [team.recipient], flags: K8S_SECRETS });
    const e = await refusal(decryptSops('shop/creds.sops.yaml', encrypted, [other.identity]));
    expect(e.message).toContain('shop/creds.sops.yaml');
    expect(e.message).toContain(team.recipient);
    expect((await refusal(decryptSops('x.yaml', encrypted, []))).message).toContain('no age key');
  });

  it('refuses a value changed in clear after encryption (the MAC)', async () => {
    const encrypted = sopsEncrypt(SECRET, { recipients: [team.recipient], flags: K8S_SECRETS });
    const tampered = encrypted.replace('app: web', 'app: evil');
    expect(tampered).not.toBe(encrypted);
    expect((await refusal(decryptSops('t.yaml', tampered, [team.identity]))).message).toMatch(
      /MAC does not match/,
    );
    const redated = encrypted.replace(/lastmodified: "[^"]+"/, 'lastmodified: "2001-01-01T00:00:00Z"');
    expect(redated).not.toBe(encrypted);
    expect((await refusal(decryptSops('t.yaml', redated, [team.identity]))).message).toMatch(
      /MAC does not decrypt/,
    );
  });

  it('refuses an encrypted value removed, or moved to another key', async () => {
    const encrypted = sopsEncrypt(SECRET, { recipients: [team.recipient], flags: K8S_SECRETS });
    const removed = encrypted.replace(/^ {4}debug: .*\n/m, '');
    expect(removed).not.toBe(encrypted);
    expect((await refusal(decryptSops('r.yaml', removed, [team.identity]))).message).toMatch(
      /MAC does not match/,
    );

    const password = /^ {4}password: (.*)$/m.exec(encrypted)?.[1] ?? '';
    const moved = encrypted.replace(/^( {4}"10": ).*$/m, `$1${password}`);
    const e = await refusal(decryptSops('m.yaml', moved, [team.identity]));
    expect(e.message).toContain('stringData.10 does not decrypt');
    expect(e.message).not.toContain('correct-horse');
  });

  it('refuses a value left in clear where the file says it is encrypted', async () => {
    const encrypted = sopsEncrypt(SECRET, { recipients: [team.recipient], flags: K8S_SECRETS });
    const clear = encrypted.replace(/^( {4}password: ).*$/m, '$1plain');
    expect((await refusal(decryptSops('c.yaml', clear, [team.identity]))).message).toContain(
      'stringData.password is not a sops value',
    );
  });

  it('refuses what it does not support by name', async () => {
    const shamir = sopsEncrypt(SECRET, {
      recipients: [team.recipient, other.recipient],
      flags: [...K8S_SECRETS, '--shamir-secret-sharing-threshold', '2'],
    });
    expect((await refusal(decryptSops('k.yaml', shamir, [team.identity]))).message).toContain('key_groups');
    const noSops = await refusal(decryptSops('p.yaml', SECRET, [team.identity]));
    expect(noSops.message).toContain('no sops metadata');
    const two = await refusal(decryptSops('two.yaml', `${SECRET}---\n${SECRET}`, [team.identity]));
    expect(two.message).toContain('2 YAML documents');
  });
});
