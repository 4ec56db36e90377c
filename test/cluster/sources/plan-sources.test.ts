/**
 * `janus plan --base` on a pull request that changes sources (docs/sources.md, "Where people
 * look"), with the real kustomize and the real API server: the source rendered at the base and
 * at the head, and the transaction the merge would make shown, its updates dry-run as the
 * source's ServiceAccount under its field manager. Then the pull request is merged and `janus run`
 * makes exactly that transaction. A head whose render is refused or fails says so, naming the
 * object or the tool's file, and its markdown shows the pusher's text as text.
 */
import { describe, expect, it } from 'vitest';
import type { PlannedChange, TransactionPlan } from '../../../src/cli/plan-view.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { ScratchWorkTree } from '../../support/git/git-server.ts';
import { janus } from '../../support/processes/cli.ts';
import { createTestRepo, useGitServer, useJanus } from '../gitops/harness.ts';
import {
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
    { kubeconfig: clients.kubeconfigs.admin },
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
