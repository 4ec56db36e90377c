/**
 * The formats a source's SOPS files come in (src/sops/sops-file.ts), against the real sops: a
 * dotenv, JSON and binary file sops encrypted, read back as `sops decrypt` writes them; and an
 * object Janus encrypts (src/sops/encrypt.ts) read back by `sops decrypt` and by Janus's reader.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { decryptSops } from '../../../src/sops/decrypt.ts';
import { encryptObject } from '../../../src/sops/encrypt.ts';
import { SopsError } from '../../../src/sops/sops-error.ts';
import { decryptSopsFile, looksSopsEncrypted } from '../../../src/sops/sops-file.ts';
import { checkSopsStructure } from '../../../src/sops/structure.ts';
import {
  type AgeKey,
  newAgeKey,
  sopsBinaries,
  sopsDecrypt,
  sopsEncrypt,
} from '../../support/servers/sops.ts';

let team: AgeKey;
let other: AgeKey;

beforeAll(async () => {
  sopsBinaries();
  [team, other] = await Promise.all([newAgeKey(), newAgeKey()]);
}, 600_000);

const DOTENV = '# the database\nPASSWORD=correct-horse\nUSER=admin\nMULTI=line1\\nline2\nEMPTY=\n';

describe('decryptSopsFile', () => {
  it('reads a dotenv file as sops decrypt writes it, and names the values that were encrypted', async () => {
    const encrypted = sopsEncrypt(DOTENV, { recipients: [team.recipient], format: 'env' });
    expect(encrypted).not.toContain('correct-horse');
    expect(looksSopsEncrypted('app/db.env', encrypted)).toBe(true);
    const ours = await decryptSopsFile('app/db.env', encrypted, [team.identity]);
    expect(ours.text).toBe(sopsDecrypt(encrypted, team.identity, 'env'));
    expect(ours.text).toBe(DOTENV);
    expect(ours.values).toEqual(expect.arrayContaining(['correct-horse', 'admin', 'line1\nline2']));
  });

  it('refuses a dotenv file whose value was changed after encryption', async () => {
    const encrypted = sopsEncrypt(DOTENV, { recipients: [team.recipient], format: 'env' });
    const other = sopsEncrypt('USER=root\n', { recipients: [team.recipient], format: 'env' });
    const swapped = encrypted.replace(/^USER=.*$/m, (other.match(/^USER=.*$/m) ?? [''])[0]);
    await expect(decryptSopsFile('app/db.env', swapped, [team.identity])).rejects.toThrow(SopsError);
  });

  it('reads JSON and binary files', async () => {
    const json = sopsEncrypt('{"password": "hunter22", "port": 5432}', {
      recipients: [team.recipient],
      format: 'json',
    });
    const ours = await decryptSopsFile('values.json', json, [team.identity]);
    expect(JSON.parse(ours.text)).toEqual(JSON.parse(sopsDecrypt(json, team.identity, 'json')));
    const binary = sopsEncrypt('a key file\nwith two lines\n', {
      recipients: [team.recipient],
      format: 'bin',
    });
    expect(looksSopsEncrypted('tls/key.bin', binary)).toBe(true);
    const opened = await decryptSopsFile('tls/key.bin', binary, [team.identity]);
    expect(opened.text).toBe('a key file\nwith two lines\n');
  });

  it('names the file when no key opens it, and refuses INI', async () => {
    const encrypted = sopsEncrypt(DOTENV, { recipients: [team.recipient], format: 'env' });
    await expect(decryptSopsFile('app/db.env', encrypted, [other.identity])).rejects.toThrow(
      /^app\/db\.env: none of the age keys available decrypts it/,
    );
    const ini = sopsEncrypt('[db]\npassword = x\n', { recipients: [team.recipient], format: 'ini' });
    expect(looksSopsEncrypted('db.ini', ini)).toBe(true);
    await expect(decryptSopsFile('db.ini', ini, [team.identity])).rejects.toThrow(/INI/);
  });

  it('leaves a file without sops metadata alone', () => {
    expect(looksSopsEncrypted('app/plain.env', 'A=1\n')).toBe(false);
    expect(looksSopsEncrypted('values.yaml', 'replicas: 2\n')).toBe(false);
  });
});

describe('encryptObject', () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'shop', labels: { app: 'db' } },
    type: 'Opaque',
    data: { password: Buffer.from('correct-horse').toString('base64'), metadata: 'bWV0YQ==' },
    stringData: { port: '5432', n: 3, ratio: 0.5, on: true, empty: '' },
  };

  it('writes what sops decrypt and Janus read back, identity in clear', async () => {
    const text = (await encryptObject(secret, [team.recipient, other.recipient])) as string;
    expect(text).not.toContain(secret.data.password);
    expect(text).not.toContain('bWV0YQ==');
    checkSopsStructure('sopsContent', text); // the identity is readable before decryption
    expect(parse(sopsDecrypt(text, team.identity))).toEqual(secret);
    expect(parse(sopsDecrypt(text, other.identity))).toEqual(secret);
    expect(await decryptSops('sopsContent', text, [other.identity])).toEqual(secret);
  });

  it('makes nothing of an object with no field beside its identity', async () => {
    expect(
      await encryptObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }, [team.recipient]),
    ).toBe(undefined);
  });
});

describe('looksSopsEncrypted', () => {
  it('needs a top-level sops mapping, not a nested one', () => {
    expect(looksSopsEncrypted('cm.json', '{"data": {"sops": {"mac": "x"}}}')).toBe(false);
    expect(looksSopsEncrypted('cm.yaml', 'data:\n  sops: {mac: x}\n')).toBe(false);
    expect(looksSopsEncrypted('cm.yaml', 'a: 1\n---\nsops:\n  mac: x\n')).toBe(true);
  });
});

describe('a crafted dotenv file', () => {
  it('is refused for metadata sops never writes: a list index past 255, a key that is no name', async () => {
    const mac = 'sops_mac=ENC[AES256_GCM,data:AA==,iv:AA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]\n';
    await expect(
      decryptSopsFile('x.env', `A=1\nsops_age__list_1000__map_recipient=age1x\n${mac}`, [team.identity]),
    ).rejects.toThrow(/sops_age__list_1000__map_recipient is no sops metadata Janus reads/);
    await expect(
      decryptSopsFile('x.env', `sops___proto____map_polluted=yes\n${mac}`, [team.identity]),
    ).rejects.toThrow(SopsError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
