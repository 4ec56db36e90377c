/**
 * SOPS files of a source decrypted in the render's private checkout (src/render/decrypt-inputs.ts),
 * with files the real sops encrypted and the real kustomize and helm: a secretGenerator fed by an
 * encrypted dotenv file and an encrypted `files:` entry, an encrypted resource and patch, a chart's
 * encrypted values file, a plain folder's encrypted Secret. The plaintext is only in the checkout
 * (0600) while the tool runs, and gone after, a failed and a killed render too; no key, another
 * key, a key the ServiceAccount may not read: the render fails naming the file.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Checkout } from '../../../src/render/checkout.ts';
import { type Decryption, decryptInputs } from '../../../src/render/decrypt-inputs.ts';
import { DEFAULT_RENDER_LIMITS } from '../../../src/render/limits.ts';
import { RenderKeyError } from '../../../src/render/render-error.ts';
import { Renderer } from '../../../src/render/renderer.ts';
import type { RenderRequest, RenderResult } from '../../../src/render/types.ts';
import { helmRequest, type SourceRepo, sourceRepository } from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';

const PASSWORD = 'correct-horse-battery';
const API_KEY = 'sk-live-0123456789';

let team: AgeKey;
let other: AgeKey;
let renderer: Renderer | undefined;

beforeAll(async () => {
  sopsBinaries();
  renderTools();
  [team, other] = await Promise.all([newAgeKey(), newAgeKey()]);
}, 600_000);
afterEach(() => renderer?.stop());

const KUSTOMIZE: RenderRequest = { path: 'app', method: { kind: 'kustomize' }, namespace: 'shop' };

const keys = (...identities: string[]): Decryption => ({ identities: async () => identities });

interface Seen {
  checkouts: Checkout[];
}

/** Renders with `decryption`, noting each checkout it wrote. */
function render(
  repo: SourceRepo,
  commit: string,
  request: RenderRequest,
  decryption: Decryption | undefined,
  seen: Seen = { checkouts: [] },
  limits = DEFAULT_RENDER_LIMITS,
): Promise<RenderResult> {
  renderer = new Renderer({ tools: renderTools(), limits });
  return renderer.render({
    source: 'shop/app',
    request,
    decryption,
    checkout: async () => {
      const checkout = await repo.checkout(commit);
      seen.checkouts.push(checkout);
      return checkout;
    },
  });
}

/** A rendered Secret's data decoded, and its stringData. */
function secretData(result: RenderResult, name: string): Record<string, string> {
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.failure)}`);
  const secret = result.objects.find((o) => o.kind === 'Secret' && o.metadata.name.startsWith(name)) as
    | { data?: Record<string, string>; stringData?: Record<string, string> }
    | undefined;
  const data = Object.entries(secret?.data ?? {}).map(([k, v]) => [
    k,
    Buffer.from(v, 'base64').toString('utf8'),
  ]);
  return { ...Object.fromEntries(data), ...secret?.stringData };
}

async function overlay(repo: SourceRepo, extra: Record<string, string> = {}): Promise<string> {
  return repo.commit({
    'app/kustomization.yaml': [
      'resources:',
      '- api-key.yaml',
      'secretGenerator:',
      '- name: db',
      '  envs:',
      '  - db.env',
      '- name: tls',
      '  files:',
      '  - key.pem=tls.bin',
      'patches:',
      '- path: patch.yaml',
      '',
    ].join('\n'),
    'app/db.env': sopsEncrypt(`PASSWORD=${PASSWORD}\nUSER=shop\n`, {
      recipients: [team.recipient],
      format: 'env',
    }),
    'app/tls.bin': sopsEncrypt('-----BEGIN KEY-----\nabc\n', { recipients: [team.recipient], format: 'bin' }),
    'app/api-key.yaml': sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  key: ${API_KEY}\n`,
      { recipients: [team.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
    ),
    'app/patch.yaml': sopsEncrypt(
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  extra: patched-value\n',
      { recipients: [team.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
    ),
    ...extra,
  });
}

describe('SOPS files in a render', () => {
  it("decrypts every file a kustomization reads, with the namespace's key, and removes the plaintext after", async () => {
    const repo = await sourceRepository();
    const commit = await overlay(repo);
    const seen: Seen = { checkouts: [] };
    const result = await render(repo, commit, KUSTOMIZE, keys(other.identity, team.identity), seen);
    expect(secretData(result, 'db-')).toEqual({ PASSWORD, USER: 'shop' });
    expect(secretData(result, 'tls-')).toEqual({ 'key.pem': '-----BEGIN KEY-----\nabc\n' });
    expect(secretData(result, 'api')).toEqual({ key: API_KEY, extra: 'patched-value' });
    expect(result.ok && result.decrypted?.map((d) => d.file)).toEqual([
      'app/api-key.yaml',
      'app/db.env',
      'app/patch.yaml',
      'app/tls.bin',
    ]);
    expect(result.ok && result.decrypted?.[1]?.recipients).toEqual([team.recipient]);
    for (const checkout of seen.checkouts) expect(existsSync(checkout.root)).toBe(false);
  });

  it('writes the plaintext 0600 in the checkout only', async () => {
    const repo = await sourceRepository();
    const commit = await overlay(repo);
    const checkout = await repo.checkout(commit);
    try {
      const opened = await decryptInputs(
        checkout.root,
        ['app/db.env', 'app/kustomization.yaml'],
        keys(team.identity),
      );
      expect(opened.ok).toBe(true);
      const file = join(checkout.root, 'app/db.env');
      expect(readFileSync(file, 'utf8')).toBe(`PASSWORD=${PASSWORD}\nUSER=shop\n`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(checkout.root, '..')).mode & 0o777).toBe(0o700);
    } finally {
      await checkout.remove();
    }
    expect(existsSync(checkout.root)).toBe(false);
  });

  it('removes the plaintext when the tool fails, and when it is killed', async () => {
    const repo = await sourceRepository();
    // kustomize fails on the second resource, after the first was decrypted.
    const broken = await overlay(repo, {
      'app/kustomization.yaml': 'resources:\n- api-key.yaml\n- broken.yaml\n',
      'app/broken.yaml': 'kind: [\n',
    });
    const seen: Seen = { checkouts: [] };
    const result = await render(repo, broken, KUSTOMIZE, keys(team.identity), seen);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    for (const checkout of seen.checkouts) expect(existsSync(checkout.root)).toBe(false);

    // A chart that runs past the time bound after its values file was decrypted: killed, removed.
    const slow = await repo.commit({
      'chart/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n',
      'chart/templates/t.yaml': '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}',
      'chart/secrets.yaml': sopsEncrypt(`password: ${PASSWORD}\n`, { recipients: [team.recipient] }),
    });
    const killed: Seen = { checkouts: [] };
    const timedOut = await render(
      repo,
      slow,
      helmRequest('chart', { valuesFiles: ['secrets.yaml'] }),
      keys(team.identity),
      killed,
      { ...DEFAULT_RENDER_LIMITS, timeoutMs: 1000 },
    );
    expect(!timedOut.ok && timedOut.failure.bound).toBe('time');
    for (const checkout of killed.checkouts) expect(existsSync(checkout.root)).toBe(false);
  });

  it("decrypts a chart's values files and a plain folder's manifests", async () => {
    const repo = await sourceRepository();
    const commit = await repo.commit({
      'chart/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n',
      'chart/values.yaml': 'user: shop\n',
      'chart/secrets.yaml': sopsEncrypt(`password: ${PASSWORD}\n`, { recipients: [team.recipient] }),
      'chart/templates/secret.yaml':
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {{ .Values.password }}\n  user: {{ .Values.user }}\n',
      'plain/secret.yaml': sopsEncrypt(
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: plain\nstringData:\n  password: ${PASSWORD}\n`,
        { recipients: [team.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
      ),
    });
    const chart = await render(
      repo,
      commit,
      helmRequest('chart', { valuesFiles: ['values.yaml', 'secrets.yaml'] }),
      keys(team.identity),
    );
    if (!chart.ok) throw new Error(JSON.stringify(chart.failure));
    const secret = chart.objects.find((o) => o.kind === 'Secret') as unknown as { stringData: object };
    expect(secret.stringData).toEqual({ password: PASSWORD, user: 'shop' });
    expect(chart.decrypted?.map((d) => d.file)).toEqual(['chart/secrets.yaml']);

    const plain = await render(
      repo,
      commit,
      { path: 'plain', method: { kind: 'plain', recurse: false }, namespace: 'shop' },
      keys(team.identity),
    );
    if (!plain.ok) throw new Error(JSON.stringify(plain.failure));
    expect(plain.objects[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'plain' },
      stringData: { password: PASSWORD },
    });
  });

  it("redacts a decrypted value from the tool's message", async () => {
    const repo = await sourceRepository();
    const commit = await repo.commit({
      'chart/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n',
      'chart/secrets.yaml': sopsEncrypt(`password: ${PASSWORD}\n`, { recipients: [team.recipient] }),
      'chart/templates/t.yaml': '{{ fail (printf "bad password %s" .Values.password) }}',
    });
    const result = await render(
      repo,
      commit,
      helmRequest('chart', { valuesFiles: ['secrets.yaml'] }),
      keys(team.identity),
    );
    expect(!result.ok && result.failure.message).toMatch(/bad password \(decrypted\)/);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
  });

  it('fails the render naming the file when no key opens it or the keys cannot be read', async () => {
    const repo = await sourceRepository();
    const commit = await overlay(repo);
    const wrong = await render(repo, commit, KUSTOMIZE, keys(other.identity));
    expect(wrong).toEqual({
      ok: false,
      failure: expect.objectContaining({ tool: 'janus', file: 'app/api-key.yaml' }),
    });
    expect(!wrong.ok && wrong.failure.message).toMatch(
      /^app\/api-key\.yaml: none of the age keys available decrypts it \(it is encrypted for age1/,
    );
    const seen: Seen = { checkouts: [] };
    const noKeys = await render(
      repo,
      commit,
      KUSTOMIZE,
      {
        identities: async () => {
          throw new RenderKeyError('Secret "shop/janus-sops-age", which holds the age keys, does not exist');
        },
      },
      seen,
    );
    expect(!noKeys.ok && noKeys.failure).toEqual(
      expect.objectContaining({
        file: 'app/api-key.yaml',
        message:
          'app/api-key.yaml is SOPS-encrypted, and Secret "shop/janus-sops-age", which holds the age keys, does not exist',
      }),
    );
    for (const checkout of seen.checkouts) expect(existsSync(checkout.root)).toBe(false);
  });

  it('leaves the files encrypted without a decryption (janus validate, offline)', async () => {
    const repo = await sourceRepository();
    const commit = await overlay(repo);
    const result = await render(repo, commit, KUSTOMIZE, undefined);
    expect(result.ok && result.decrypted).toEqual([]);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
  });
});
