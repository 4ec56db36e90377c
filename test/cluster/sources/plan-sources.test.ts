/**
 * `janus plan --base` on a pull request that changes sources (docs/sources.md, "Where people
 * look"), with the real kustomize and the real API server: the source rendered at the base and
 * at the head, and the transaction the merge would make shown, its updates dry-run as the
 * source's ServiceAccount under its field manager. Then the pull request is merged and `janus run`
 * makes exactly that transaction. A head whose render is refused or fails says so, naming the
 * object or the tool's file, and its markdown shows the pusher's text as text. A source's SOPS
 * files are decrypted as `janus run` decrypts them, the key read as the identity the plan runs
 * as: its Secret planned with its real, masked diff; a head that copies a decrypted value into a
 * ConfigMap, an annotation, a label, a name or a kustomize error gets no plaintext into any
 * output; a key the identity may not read, or a file not encrypted for it, is named.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PlannedChange, TransactionPlan } from '../../../src/cli/plan-view.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { ScratchWorkTree } from '../../support/git/git-server.ts';
import { type CliResult, janus } from '../../support/processes/cli.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';
import { createTestRepo, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  ageKeySecret as ageKeySecretOf,
  attempted,
  declaration,
  SOURCE_DEPLOYER,
  sourceFlags,
  untilSource,
  yamlDocuments,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-plan');
const git = useGitServer();
const janusRun = useJanus(clients);

function overlay(tag: string, withOld: boolean): Record<string, string | null> {
  return {
    'deploy/web/kustomization.yaml': yamlDocuments({
      resources: ['deployment.yaml', ...(withOld ? ['old.yaml'] : [])],
      images: [{ name: 'web', newName: 'registry.example/web', newTag: tag }],
    }),
    'deploy/web/deployment.yaml': yamlDocuments({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'web' }] },
        },
      },
    }),
    'deploy/web/old.yaml': withOld
      ? yamlDocuments({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old' }, data: { a: '1' } })
      : null,
  };
}

/** `janus plan` of the clone at `dir`, its base origin/main, with the policy `janus run` has. */
function plan(dir: string, ...args: string[]) {
  return planWith({}, dir, ...args);
}

function planWith(env: Record<string, string>, dir: string, ...args: string[]) {
  return janus(
    [
      'plan',
      dir,
      '--base',
      'origin/main',
      '--default-namespace',
      ns.name,
      '--allowed-service-accounts',
      'deployer',
      '--controller-namespace',
      'janus-system',
      ...sourceFlags(),
      ...args,
    ],
    { kubeconfig: clients.kubeconfigs.admin, env },
  );
}

const withoutDeletions = (files: Record<string, string | null>): Record<string, string> =>
  Object.fromEntries(Object.entries(files).filter((e): e is [string, string] => e[1] !== null));

const summary = (c: PlannedChange) => `${c.type} ${c.target}: ${c.action}`;

describe('janus plan of sources', () => {
  it('shows the update with its diff and the prune a pull request makes, and janus run then makes that transaction', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janusRun.start({ repo: repo.url, namespace: ns.name, args: sourceFlags() });
    const first = await repo.push({
      ...declaration('web', ns.name, { path: 'deploy/web', kustomize: {}, prune: true }),
      ...overlay('v1', true),
    });
    await untilSource(clients.admin, ns.name, 'web', attempted(first, 'Committed'));

    const tree = await ScratchWorkTree.clone(repo.bare);
    try {
      await tree.write(overlay('v2', false));
      const head = await tree.commit('web v2, without the old ConfigMap');
      const result = await plan(tree.dir, '-o', 'json');
      expect(result.code, result.stderr).toBe(1);
      const plans = JSON.parse(result.stdout) as TransactionPlan[];
      expect(plans).toHaveLength(1);
      const [web] = plans as [TransactionPlan];
      expect(web).toMatchObject({
        namespace: ns.name,
        name: `web-${head.slice(0, 7)}`,
        identity: `system:serviceaccount:${ns.name}:deployer`,
        problems: [],
        source: {
          name: 'web',
          file: 'sources/web.yaml',
          base: first,
          head,
          verdict: 'transaction',
          comparedWith: 'cluster',
        },
      });
      expect(web.changes.map(summary)).toEqual([
        `Apply apps/v1 Deployment ${ns.name}/web: update`,
        `Delete v1 ConfigMap ${ns.name}/old: delete`,
      ]);
      expect(web.changes[0]?.diff).toMatch(/^-.*image: registry\.example\/web:v1$/m);
      expect(web.changes[0]?.diff).toMatch(/^\+.*image: registry\.example\/web:v2$/m);
      expect(web.changes[1]?.diff).toContain('-  a: "1"');

      const md = await plan(tree.dir, '-o', 'markdown');
      expect(md.code, md.stderr).toBe(1);
      expect(md.stdout).toContain(`| 1 | Delete | \`v1 ConfigMap ${ns.name}/old\` | would be pruned |`);
      expect(md.stdout).toContain(
        `#### Source \`${ns.name}/web\` (\`sources/web.yaml\`), \`${first.slice(0, 7)}\` → \`${head.slice(0, 7)}\``,
      );

      // Merged: janus run makes the transaction the plan showed.
      await tree.push('main');
      const txn = await waitForPhase(clients.admin, ns.name, `web-${head.slice(0, 7)}`, 'Committed', 240_000);
      expect(
        txn.spec.changes.map(
          (c) => `${c.type} ${c.target.apiVersion} ${c.target.kind} ${c.target.namespace}/${c.target.name}`,
        ),
      ).toEqual(web.changes.map((c) => `${c.type} ${c.target}`));
    } finally {
      await tree.dispose();
    }
  });

  it("names a refused object, and a render failure at the tool's file and line, escaped in the markdown", {
    timeout: 300_000,
  }, async () => {
    const repo = await createTestRepo(git.server, {
      ...declaration('web', ns.name, { path: 'deploy/web', kustomize: {} }),
      ...withoutDeletions(overlay('v1', false)),
    });
    const tree = await ScratchWorkTree.clone(repo.bare);
    try {
      await tree.write({
        ...declaration('theirs', ns.name, { path: 'deploy/theirs', kustomize: {} }),
        'deploy/theirs/kustomization.yaml': yamlDocuments({ resources: ['cm.yaml'] }),
        'deploy/theirs/cm.yaml': yamlDocuments({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'theirs', namespace: 'kube-public' },
        }),
        ...declaration('broken', ns.name, { path: 'deploy/broken', kustomize: {} }),
        'deploy/broken/kustomization.yaml': yamlDocuments({
          resources: ['[approve](https://evil.example) @here.yaml'],
        }),
      });
      await tree.commit('two new sources');
      const result = await plan(tree.dir, '-o', 'json');
      expect(result.code, result.stderr).toBe(2);
      const plans = JSON.parse(result.stdout) as TransactionPlan[];
      const byName = new Map(plans.map((p) => [p.source?.name, p]));
      // web's render did not change: not planned.
      expect([...byName.keys()].sort()).toEqual(['broken', 'theirs']);
      expect(byName.get('theirs')).toMatchObject({
        source: { verdict: 'refused' },
        problems: [expect.stringMatching(/^v1 ConfigMap kube-public\/theirs: namespace kube-public /)],
      });
      expect(byName.get('broken')).toMatchObject({
        source: { verdict: 'render-failed' },
        // The pre-check's (no such file) or kustomize's message, at the kustomization's line.
        problems: [
          expect.stringMatching(
            /^deploy\/broken\/kustomization\.yaml:\d+: (kustomize|janus)\b.*evil\.example/,
          ),
        ],
      });

      const md = await plan(tree.dir, '-o', 'markdown');
      expect(md.code, md.stderr).toBe(2);
      expect(md.stdout.split('\n')[0]).toBe('### Janus plan: ❌ would be refused');
      const evil = md.stdout.split('\n').filter((l) => l.includes('evil.example'));
      expect(evil.length).toBeGreaterThan(0);
      // The pusher's text only ever inside a code span.
      for (const line of evil) expect(line).toMatch(/^- `[^`]*evil\.example[^`]*`$/);
    } finally {
      await tree.dispose();
    }
  });
});

let team: AgeKey;
let stranger: AgeKey;

describe('janus plan of sources with SOPS files', () => {
  beforeAll(async () => {
    sopsBinaries();
    team = await newAgeKey();
    stranger = await newAgeKey();
  }, 600_000);

  const ageKeySecret = () => ageKeySecretOf(clients.admin, ns.name, team);

  /** A kustomize source whose Secret app-env is generated from an encrypted dotenv file. */
  const envSource = (name: string, token: string, key: AgeKey = team): Record<string, string> => ({
    ...declaration(name, ns.name, { path: `deploy/${name}`, kustomize: {} }),
    [`deploy/${name}/kustomization.yaml`]: yamlDocuments({
      secretGenerator: [{ name: `${name}-env`, envs: ['app.env'], options: { disableNameSuffixHash: true } }],
    }),
    [`deploy/${name}/app.env`]: sopsEncrypt(`API_TOKEN=${token}\nREGION=eu-west\n`, {
      recipients: [key.recipient],
      format: 'env',
    }),
  });

  /**
   * `janus plan` in every format: the JSON plans, and all it printed in any. Its temporary folder
   * is one of the test's own, where the renders' checkouts (the plaintext's only place) must be
   * gone when it ends.
   */
  async function planInEveryFormat(dir: string, ...args: string[]) {
    const runs: CliResult[] = [];
    const tmp = await mkdtemp(join(tmpdir(), 'plan-sops-'));
    try {
      for (const format of [['-o', 'json'], ['-o', 'yaml'], ['-o', 'markdown'], ['-o', 'diff'], []])
        runs.push(await planWith({ TMPDIR: tmp }, dir, ...format, ...args));
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    const [json] = runs as [CliResult];
    return {
      code: json.code,
      stderr: json.stderr,
      plans: JSON.parse(json.stdout) as TransactionPlan[],
      printed: runs.map((r) => `${r.stdout}\n${r.stderr}`).join('\n'),
      codes: runs.map((r) => r.code),
    };
  }

  /** None of `secrets` in `printed`: as they are, JSON-escaped, base64, or any line of them. */
  function expectNoPlaintext(printed: string, secrets: readonly string[]): void {
    for (const secret of secrets)
      for (const form of [
        secret,
        JSON.stringify(secret).slice(1, -1),
        Buffer.from(secret).toString('base64'),
        ...secret.split('\n'),
      ])
        expect(printed, `a form of a decrypted value: ${form}`).not.toContain(form);
  }

  it("plans a kustomize source's SOPS Secret with its real, masked diff, the key read as the ServiceAccount", {
    timeout: 600_000,
  }, async () => {
    const before = `before-${randomBytes(8).toString('hex')}`;
    const after = `after-${randomBytes(8).toString('hex')}`;
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    await ageKeySecret();
    // What the base's commit applied.
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-env', namespace: ns.name },
      stringData: { API_TOKEN: before, REGION: 'eu-west' },
    });
    const repo = await createTestRepo(git.server, envSource('app', before));
    const tree = await ScratchWorkTree.clone(repo.bare);
    try {
      await tree.write(envSource('app', after));
      const head = await tree.commit('a new API token');
      const result = await planInEveryFormat(tree.dir);
      expect(result.codes, result.stderr).toEqual([1, 1, 1, 1, 1]);
      expect(result.plans).toHaveLength(1);
      const [app] = result.plans as [TransactionPlan];
      expect(app).toMatchObject({
        name: `app-${head.slice(0, 7)}`,
        identity: `system:serviceaccount:${ns.name}:deployer`,
        problems: [],
        source: { name: 'app', verdict: 'transaction' },
      });
      expect(app.changes.map(summary)).toEqual([`Apply v1 Secret ${ns.name}/app-env: update`]);
      // Only a value changes: masked, and not compared (a plan never says whether a value is
      // the live one), so no diff, and a note instead.
      expect(app.changes[0]?.diff).toBe('');
      expect(app.changes[0]?.note).toContain('never compared');
      expect(result.printed).not.toMatch(/\(before\)|\(after\)/);
      expectNoPlaintext(result.printed, [before, after, 'eu-west']);
    } finally {
      await tree.dispose();
    }
  });

  it('refuses a head that copies a decrypted value into a ConfigMap or a Secret’s metadata, and prints none it puts in a label, an annotation, a name or a kustomize error', {
    timeout: 600_000,
  }, async () => {
    const hex = () => randomBytes(6).toString('hex');
    const copied = `copied-${hex()}`;
    const name = `name-${hex()}`;
    const label = `label-${hex()}`;
    const annotation = `annotation one ${hex()} "quoted"\nannotation two ${hex()}`;
    const data = `data-${hex()}`;
    const patched = `patch"ed-${hex()}\nline two-${hex()}`;
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    await ageKeySecret();
    const encrypt = (object: unknown, regex: string) =>
      sopsEncrypt(yamlDocuments(object), {
        recipients: [team.recipient],
        flags: ['--encrypted-regex', regex],
      });
    const repo = await createTestRepo(git.server);
    const tree = await ScratchWorkTree.clone(repo.bare);
    try {
      await tree.write({
        // A replacement copies the Secret's value into a ConfigMap's data and name.
        ...declaration('copy', ns.name, { path: 'deploy/copy', kustomize: {} }),
        'deploy/copy/kustomization.yaml': yamlDocuments({
          resources: ['secret.yaml', 'cm.yaml'],
          replacements: [
            {
              source: { kind: 'Secret', name: 'creds', fieldPath: 'stringData.token' },
              targets: [
                { select: { kind: 'ConfigMap', name: 'leak' }, fieldPaths: ['data.copy', 'metadata.name'] },
              ],
            },
          ],
        }),
        'deploy/copy/secret.yaml': encrypt(
          { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { token: copied } },
          '^stringData$',
        ),
        'deploy/copy/cm.yaml': yamlDocuments({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'leak' },
          data: { copy: 'x' },
        }),
        // A Secret (which may carry them) with decrypted values in its name, a label and an annotation.
        ...declaration('meta', ns.name, { path: 'deploy/meta', kustomize: {} }),
        'deploy/meta/kustomization.yaml': yamlDocuments({ resources: ['secret.yaml'] }),
        'deploy/meta/secret.yaml': encrypt(
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name, labels: { exfil: label }, annotations: { exfil: annotation } },
            stringData: { token: data },
          },
          '^(name|exfil|stringData)$',
        ),
        // A patch named after a value: kustomize quotes it, as it is and as Go's %q.
        ...declaration('error', ns.name, { path: 'deploy/error', kustomize: {} }),
        'deploy/error/kustomization.yaml': yamlDocuments({
          resources: ['cm.yaml'],
          patches: [{ path: 'patch.yaml' }],
        }),
        'deploy/error/cm.yaml': yamlDocuments({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'cm' },
        }),
        'deploy/error/patch.yaml': encrypt(
          { apiVersion: 'v1', kind: 'Secret', metadata: { name: patched } },
          '^name$',
        ),
      });
      await tree.commit('three sources that try to print their secrets');
      const result = await planInEveryFormat(tree.dir);
      expect(result.codes, result.stderr).toEqual([2, 2, 2, 2, 2]);
      const byName = new Map(result.plans.map((p) => [p.source?.name, p]));
      expect(byName.get('copy')).toMatchObject({
        source: { verdict: 'refused' },
        problems: [
          `v1 ConfigMap ${ns.name}/(decrypted) carries a value decrypted from deploy/copy/secret.yaml: only a Secret, or a kind --sops-kinds allows, may (it is kept encrypted until applied; this object would be stored in clear). Put the value in a Secret and reference it`,
        ],
      });
      // A Secret's metadata stays in clear in the Transaction: a decrypted value there refuses it too.
      expect(byName.get('meta')).toMatchObject({
        source: { verdict: 'refused' },
        problems: [
          expect.stringContaining(
            `v1 Secret ${ns.name}/(decrypted) carries a value decrypted from deploy/meta/secret.yaml in its metadata`,
          ),
        ],
      });
      expect(byName.get('error')).toMatchObject({
        source: { verdict: 'render-failed' },
        problems: [
          expect.stringMatching(/kustomize: .*no matches for Id Secret\.v1\.\[noGrp\]\/\(decrypted\)/),
        ],
      });
      expectNoPlaintext(result.printed, [copied, name, label, annotation, data, patched]);
    } finally {
      await tree.dispose();
    }
  });

  it('names the Secret its identity may not read, and the file not encrypted for the key, and plans the other sources', {
    timeout: 600_000,
  }, async () => {
    // The deployer may write ConfigMaps only: it may not read janus-sops-age.
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await ageKeySecret();
    const web = (value: string) => ({
      ...declaration('web', ns.name, { path: 'deploy/web', kustomize: {} }),
      'deploy/web/kustomization.yaml': yamlDocuments({ resources: ['cm.yaml'] }),
      'deploy/web/cm.yaml': yamlDocuments({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web' },
        data: { value },
      }),
    });
    const repo = await createTestRepo(git.server, {
      ...envSource('app', 'token-one'),
      ...envSource('steady', 'token-steady'),
      ...web('one'),
    });
    const tree = await ScratchWorkTree.clone(repo.bare);
    try {
      await tree.write({
        ...envSource('app', 'token-two'),
        ...envSource('foreign', 'theirs', stranger),
        ...web('two'),
      });
      await tree.commit('a new token, a source encrypted for someone else, a ConfigMap');
      const asDeployer = await plan(tree.dir, '-o', 'json');
      expect(asDeployer.code, asDeployer.stderr).toBe(2);
      const summaries = (plans: TransactionPlan[]) =>
        plans.map((p) => [p.source?.name, p.source?.verdict, ...p.problems, ...p.changes.map(summary)]);
      const unreadable = (file: string) =>
        expect.stringContaining(
          `${file} is SOPS-encrypted, and system:serviceaccount:${ns.name}:deployer may not read Secret "${ns.name}/janus-sops-age"`,
        );
      // steady's files did not change: not planned, though it cannot be decrypted either.
      expect(summaries(JSON.parse(asDeployer.stdout))).toEqual([
        ['app', 'render-failed', unreadable('deploy/app/app.env')],
        ['foreign', 'render-failed', unreadable('deploy/foreign/app.env')],
        ['web', 'transaction', `Apply v1 ConfigMap ${ns.name}/web: create`],
      ]);

      // As the person, who may read the key: decrypted, but for the file the key cannot open.
      const asAdmin = await plan(tree.dir, '-o', 'json', '--no-as-service-account');
      expect(asAdmin.code, asAdmin.stderr).toBe(2);
      expect(summaries(JSON.parse(asAdmin.stdout))).toEqual([
        ['app', 'transaction', `Apply v1 Secret ${ns.name}/app-env: create`],
        [
          'foreign',
          'render-failed',
          expect.stringContaining(
            `deploy/foreign/app.env: none of the age keys available decrypts it (it is encrypted for ${stranger.recipient})`,
          ),
        ],
        ['web', 'transaction', `Apply v1 ConfigMap ${ns.name}/web: create`],
      ]);
    } finally {
      await tree.dispose();
    }
  });
});
