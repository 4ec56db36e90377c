/**
 * What a source's commit can be refused for, through `janus run`, with nothing applied and the
 * reason recorded on the results branch and in the Source's status: a render that fails (the
 * tool's message, file and line) while another source of the same repository commits; an object
 * the policy refuses (a namespace the repository may not use, a cluster-scoped kind
 * --allowed-cluster-kinds does not list), naming it; a declaration with problems, by file, line
 * and column.
 */
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { data, serviceAccount } from '../../support/cluster/saga.ts';
import { createTestRepo, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  attempted,
  declaration,
  SOURCE_DEPLOYER,
  sourceFlags,
  sourceTransactions,
  untilSource,
  yamlDocuments,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-refused');
const git = useGitServer();
const janus = useJanus(clients);

const configMap = (name: string, namespace?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(namespace && { namespace }) },
  data: { name },
});

const overlay = (service: string) => ({
  'deploy/broken/kustomization.yaml': yamlDocuments({ resources: ['service.yaml'] }),
  'deploy/broken/service.yaml': service,
});
const GOOD_SERVICE = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports: [{port: 80}]\n';

describe("a source's commit that is refused", () => {
  it("records a failed render with the tool's file and line while another source of the repository commits", {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags(), logLevel: 'info' });
    const commit = await repo.push({
      ...declaration('good', ns.name, { path: 'deploy/good', plain: {} }),
      'deploy/good/config.yaml': yamlDocuments(configMap('good')),
      ...declaration('broken', ns.name, { path: 'deploy/broken', kustomize: {} }),
      ...overlay('apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n spec: {}\n'),
    });
    await untilSource(clients.admin, ns.name, 'good', attempted(commit, 'Committed'));
    expect(await data(clients.admin, ns.name, 'good')).toEqual({ name: 'good' });
    const failed = await untilSource(clients.admin, ns.name, 'broken', attempted(commit, 'RenderFailed'));
    expect(failed.status?.lastAttempted?.reason).toMatch(
      /^deploy\/broken\/service.yaml:4: kustomize: .*MalformedYAMLError/,
    );
    const record = await recordedPhase(repo, ns.name, `broken-${commit.slice(0, 7)}`, 'RenderFailed');
    expect(record).toMatchObject({
      render: { source: 'broken', tool: 'kustomize', file: 'deploy/broken/service.yaml', line: 4 },
      errors: [{ file: 'deploy/broken/service.yaml', line: 4, code: 'render-failed' }],
      source: { path: 'sources/broken.yaml', revision: `main@sha1:${commit}` },
    });
    expect(await sourceTransactions(clients.admin, ns.name, 'broken')).toEqual([]);

    const fixed = await repo.push(overlay(GOOD_SERVICE));
    await untilSource(clients.admin, ns.name, 'broken', attempted(fixed, 'Committed'));
    expect(
      await clients.admin.find({ apiVersion: 'v1', kind: 'Service', namespace: ns.name, name: 'web' }),
    ).toBeDefined();
  });

  it('refuses a render with an object in another namespace or of a cluster-scoped kind not allowed, naming it', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: sourceFlags('--allowed-cluster-kinds', 'Namespace'),
      logLevel: 'info',
    });
    const elsewhere = await repo.push({
      ...declaration('app', ns.name, { path: 'deploy/app', plain: {} }),
      'deploy/app/config.yaml': yamlDocuments(configMap('mine'), configMap('theirs', 'kube-public')),
    });
    const refused = await untilSource(clients.admin, ns.name, 'app', attempted(elsewhere, 'Refused'));
    expect(refused.status?.lastAttempted?.reason).toBe(
      'v1 ConfigMap kube-public/theirs: namespace kube-public is a Kubernetes system namespace (kube-*): no repository may use it',
    );
    const record = await recordedPhase(repo, ns.name, `app-${elsewhere.slice(0, 7)}`, 'Refused');
    expect(record.errors).toEqual([
      {
        file: 'sources/app.yaml',
        code: 'object-not-allowed',
        message:
          'v1 ConfigMap kube-public/theirs: namespace kube-public is a Kubernetes system namespace (kube-*): no repository may use it',
      },
    ]);
    expect(await data(clients.admin, ns.name, 'mine')).toBeUndefined(); // one refused object refuses the commit

    const clusterRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `reader-${ns.name}` },
      rules: [],
    };
    const clusterScoped = await repo.push({
      'deploy/app/config.yaml': yamlDocuments(configMap('mine'), clusterRole),
    });
    const refusedKind = await untilSource(clients.admin, ns.name, 'app', attempted(clusterScoped, 'Refused'));
    expect(refusedKind.status?.lastAttempted?.reason).toBe(
      `rbac.authorization.k8s.io/v1 ClusterRole reader-${ns.name} is cluster-scoped, and its kind is not allowed for this repository (allowed: Namespace; set by --allowed-cluster-kinds or JANUS_ALLOWED_CLUSTER_KINDS)`,
    );
    expect(await sourceTransactions(clients.admin, ns.name, 'app')).toEqual([]);
  });

  it('rejects a declaration with problems, by file, line and column, and says so in its Source', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags(), logLevel: 'info' });
    const good = await repo.push({
      ...declaration('app', ns.name, { path: 'deploy/app', plain: {} }),
      'deploy/app/config.yaml': yamlDocuments(configMap('mine')),
    });
    await untilSource(clients.admin, ns.name, 'app', attempted(good, 'Committed'));
    const bad = await repo.push(
      declaration('app', ns.name, { path: 'deploy/app', plain: {}, prune: 'sometimes' }),
    );
    const record = await recordedPhase(repo, ns.name, `app-${bad.slice(0, 7)}`, 'Rejected');
    expect(record.errors).toEqual([
      {
        file: 'sources/app.yaml',
        line: 10,
        column: 10,
        field: 'spec.prune',
        code: 'invalid-value',
        message: 'must be true or false, found the string "sometimes"',
      },
    ]);
    const source = await untilSource(clients.admin, ns.name, 'app', attempted(bad, 'Refused'));
    expect(source.status?.lastAttempted?.reason).toBe(
      'the declaration is invalid: sources/app.yaml:10:10: spec.prune: must be true or false, found the string "sometimes"',
    );
    expect(source.status?.lastApplied?.revision).toBe(good);
  });
});
