/**
 * SOPS-encrypted change files read from Git: checked without a key, the change carrying the
 * encrypted text as it is; what Janus cannot apply is a diagnostic (`janus validate` reports the
 * same ones offline). Encrypted with the real sops.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseSopsKinds } from '../../../src/changes/sops-kinds.ts';
import { memoryReader, parseTransactionDirectory } from '../../../src/gitops/index.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';
import { at, diagnose, header, OPTIONS, parseFiles } from '../../unit/gitops/diagnose.ts';

const SECRET =
  'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: s3cret-value\n';
const K8S_SECRETS = ['--encrypted-regex', '^(data|stringData)$'];

let team: AgeKey;
beforeAll(async () => {
  sopsBinaries();
  team = await newAgeKey();
}, 600_000);

const encrypt = (text: string, flags = K8S_SECRETS) =>
  sopsEncrypt(text, { recipients: [team.recipient], flags });

describe('SOPS-encrypted change files', () => {
  it('become a change holding the encrypted text, never the value', async () => {
    const encrypted = encrypt(SECRET);
    const files = { 'transaction.yaml': header(), '10-creds.update.sops.yaml': encrypted };
    const path = 'transactions/deploy-v2';
    const prefixed = Object.fromEntries(Object.entries(files).map(([n, t]) => [`${path}/${n}`, t]));
    const result = await parseTransactionDirectory(memoryReader(prefixed), path, OPTIONS);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.transaction.spec.changes).toEqual([
      { target: { apiVersion: 'v1', kind: 'Secret', name: 'creds' }, type: 'Update', sopsContent: encrypted },
    ]);
    expect(JSON.stringify(result.transaction)).not.toContain('s3cret-value');
  });

  it('are recognised by their sops metadata whatever their name', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-cfg.update.yaml': encrypt(SECRET.replace('kind: Secret', 'kind: ConfigMap')),
    });
    expect(diagnostics).toEqual([at('10-cfg.update.yaml', { code: 'invalid-sops', field: 'kind' })]);
    expect(diagnostics[0]?.message).toContain('only to Secrets and the kinds the platform team allows');
  });

  it('target a kind other than Secret only when the policy allows it (--sops-kinds)', async () => {
    const vault = encrypt(
      'apiVersion: vault.example.com/v1\nkind: Vault\nmetadata:\n  name: v\nspec:\n  password: s3cret-value\n',
      ['--encrypted-regex', '^spec$'],
    );
    const files = { 'transaction.yaml': header(), '10-vault.create.sops.yaml': vault };
    const refused = await diagnose(files);
    expect(refused).toEqual([at('10-vault.create.sops.yaml', { code: 'invalid-sops', field: 'kind' })]);
    expect(refused[0]?.message).toContain(
      '(--sops-kinds, JANUS_SOPS_KINDS: no other kind), not to a Vault.vault.example.com',
    );
    const allowed = { policy: { ...OPTIONS.policy, sopsKinds: parseSopsKinds('Vault.vault.example.com') } };
    const result = await parseFiles(files, allowed);
    expect(result.ok).toBe(true);
  });

  it('refuse a Patch, an encrypted identity, a value in clear and a file without sops metadata', async () => {
    const diagnostics = await diagnose({
      'transaction.yaml': header(),
      '10-a.patch.sops.yaml': encrypt(SECRET),
      '20-b.update.sops.yaml': encrypt(SECRET, []),
      '30-c.update.sops.yaml': encrypt(SECRET).replace(/password: ENC\[.*\]/, 'password: in-clear'),
      '40-d.update.sops.yaml': SECRET,
    });
    const messages = diagnostics.map(
      (d) => `${d.file.split('/').pop()}:${d.line ?? '-'} ${d.code} ${d.field ?? '-'}: ${d.message}`,
    );
    expect(messages).toEqual([
      expect.stringMatching(
        /^10-a.patch.sops.yaml:- invalid-sops -: a SOPS-encrypted change file is a Create or an Update/,
      ),
      expect.stringMatching(
        /^20-b.update.sops.yaml:1 invalid-sops apiVersion: is encrypted, so the target cannot be read/,
      ),
      expect.stringMatching(/^30-c.update.sops.yaml:6 invalid-sops stringData.password: is not a sops value/),
      expect.stringMatching(/^40-d.update.sops.yaml:- invalid-sops -: has no sops metadata block/),
    ]);
    expect(messages.join('\n')).not.toContain('s3cret-value');
  });
});
