/**
 * sops writes no YAML anchors nor aliases; a pushed file made of them cannot hold the event loop
 * (src/sops/document.ts): resolving each alias walked the whole document, 19 s for 80 KB, in the
 * key-less check every pusher reaches and in the controller's decryption of sopsContent.
 */
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { describe, expect, it } from 'vitest';
import { decryptSops } from '../../../src/sops/decrypt.ts';
import { encryptObject } from '../../../src/sops/encrypt.ts';
import { checkSopsStructure } from '../../../src/sops/structure.ts';

/** A sops-encrypted Secret with `extra` (YAML lines) added at the top level. */
async function secretWith(extra: string, recipient: string): Promise<string> {
  const text = (await encryptObject(
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'hunter22' } },
    [recipient],
  )) as string;
  return `${extra}\n${text}`;
}

/** The file of the review: 100 aliases of 100 aliases, beside 40,000 scalars every resolve walks. */
function aliasBomb(): string {
  const hundred = (alias: string) => `[${Array(100).fill(alias).join(', ')}]`;
  const padding = Array.from({ length: 40_000 }, (_, i) => `- ${i % 10}`).join('\n');
  return `s: &s x\nb: &b ${hundred('*s')}\nc: ${hundred('*b')}\npad:\n${padding}`;
}

describe('a sops file with YAML aliases', () => {
  it('is refused without its key, quickly, naming the alias', async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    const text = await secretWith(aliasBomb(), recipient);
    const start = performance.now();
    expect(() => checkSopsStructure('bomb.sops.yaml', text)).toThrow(
      'bomb.sops.yaml: b holds a YAML alias (*name), which sops never writes: refused',
    );
    expect(performance.now() - start).toBeLessThan(5000);
  });

  it('is refused when decrypted, quickly', async () => {
    const identity = await generateIdentity();
    const text = await secretWith(aliasBomb(), await identityToRecipient(identity));
    const start = performance.now();
    await expect(decryptSops('bomb.sops.yaml', text, [identity])).rejects.toThrow('holds a YAML alias');
    expect(performance.now() - start).toBeLessThan(5000);
  });

  it('is refused for a merge key or an alias in the metadata too', async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    const merge = await secretWith('base: &base {a: b}\nother:\n  <<: *base', recipient);
    expect(() => checkSopsStructure('m.sops.yaml', merge)).toThrow('holds a YAML alias');
    const plain =
      (await encryptObject({ apiVersion: 'v1', kind: 'Secret', data: { a: 'Yg==' } }, [recipient])) ?? '';
    const metadataAlias = plain.replace(/mac: (.*)/, 'mac: &m $1\n  mac_copy: *m');
    expect(metadataAlias).not.toBe(plain);
    expect(() => checkSopsStructure('m.sops.yaml', metadataAlias)).toThrow('holds a YAML alias');
  });
});
