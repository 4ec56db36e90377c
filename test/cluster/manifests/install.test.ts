/**
 * Installing Janus the documented way — `kubectl apply -k manifests/` — on the tests' control
 * plane, then running the Deployment's container exactly as the kubelet would (this control plane's
 * nodes are simulated by kwok: its pods report Ready, but no process runs) and watching it take
 * manifests/samples' Transaction to Committed.
 */
import { spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { loadKubeConfig } from '../../../src/kube/connection.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { execForm, parseDockerfile } from '../../support/dockerfile.ts';
import { eventually } from '../../support/eventually.ts';
import { localRepository } from '../../support/git/git-server.ts';
import { type Container, type PodProcess, runContainer } from './pod.ts';

const clients = useClients();
const kube = inject('kube');
const kubectlPath = kube.binDir ? join(kube.binDir, 'kubectl') : 'kubectl';

function kubectl(...args: string[]) {
  return spawnSync(kubectlPath, ['--kubeconfig', kube.kubeconfigs.admin, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
}

function rendered(dir: string): KubeObject[] {
  const out = kubectl('kustomize', dir);
  if (out.status !== 0) throw new Error(out.stderr);
  return parseAllDocuments(out.stdout).map((d) => d.toJS() as KubeObject);
}

let repo = '';
let pod: PodProcess | undefined;

beforeAll(async () => {
  repo = await localRepository('janus-install-repo-', 'Transactions for the install test.\n');
});

afterAll(async () => {
  if (pod && pod.child.exitCode === null) {
    pod.child.kill('SIGKILL');
    await pod.exited;
  }
  await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'janus-sample' }).catch(() => {});
  await clients.admin
    .delete({ apiVersion: 'v1', kind: 'Secret', name: 'janus-git', namespace: 'janus-system' })
    .catch(() => {});
  await rm(repo, { recursive: true, force: true });
});

describe('kubectl apply -k manifests/', () => {
  it('creates every object, with no Pod Security warning in the restricted janus-system namespace', async () => {
    const result = kubectl('apply', '-k', 'manifests/');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/PodSecurity|would violate/);
    const expected = rendered('manifests/');
    expect(expected.map((o) => o.kind).sort()).toEqual(
      [
        'ClusterRole', // janus-controller
        'ClusterRole', // janus-tenant, bound per namespace by those who opt in
        'ClusterRole', // janus-source-viewer, aggregated into view, edit and admin
        'ClusterRoleBinding',
        'ConfigMap',
        'CustomResourceDefinition', // transactions.tx.janus.io
        'CustomResourceDefinition', // analysistemplates.tx.janus.io
        'CustomResourceDefinition', // sources.tx.janus.io
        'CustomResourceDefinition', // instanceclaims.tx.janus.io
        'CustomResourceDefinition', // locktables.tx.janus.io
        'Deployment',
        'Namespace',
        'PodDisruptionBudget',
        'Role',
        'RoleBinding',
        'Service',
        'ServiceAccount',
        'ValidatingAdmissionPolicy', // janus-transaction-service-account
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicy', // janus-transaction-instance
        'ValidatingAdmissionPolicy', // janus-transaction-provenance
        'ValidatingAdmissionPolicy', // janus-source-provenance
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicy', // janus-locks
        'ValidatingAdmissionPolicyBinding', // janus-locks-deny, -warn, -audit (per namespace label), -cluster
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicyBinding',
      ].sort(),
    );
    for (const obj of expected) {
      const ref = {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
      };
      expect(await clients.admin.find(ref), `${obj.kind} ${obj.metadata.name}`).toBeDefined();
    }
  });

  it('is consistent: the Service, the probes and the metrics address name the same port', () => {
    const objects = rendered('manifests/');
    const deployment = objects.find((o) => o.kind === 'Deployment');
    const service = objects.find((o) => o.kind === 'Service') as KubeObject & {
      spec: { ports: { targetPort: string }[] };
    };
    if (!deployment) throw new Error('no Deployment in manifests/');
    const podSpec = (deployment.spec as { template: { spec: { containers: Container[] } } }).template.spec;
    const container = podSpec.containers[0];
    const http = container?.ports?.find((p) => p.name === service.spec.ports[0]?.targetPort);
    expect(http?.containerPort).toBe(8080);
    expect(container?.env?.find((e) => e.name === 'JANUS_METRICS_BIND_ADDRESS')?.value).toBe(
      `:${http?.containerPort}`,
    );
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container?.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(service.metadata.annotations?.['prometheus.io/port']).toBe(String(http?.containerPort));
  });

  it("runs as the Deployment's container would and takes the sample Transaction to Committed", async () => {
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'janus-git', namespace: 'janus-system' },
      stringData: { repository: repo, token: 'not-needed-for-a-local-repository' },
    });
    const deployment = await clients.admin.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'janus',
      namespace: 'janus-system',
    });
    const dockerfile = parseDockerfile(await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
    const entrypoint = execForm(
      dockerfile.stages.at(-1) ?? { base: '', name: undefined, instructions: [] },
      'ENTRYPOINT',
    );
    if (!entrypoint) throw new Error('the Dockerfile has no ENTRYPOINT');
    pod = await runContainer({
      objects: clients.admin,
      deployment,
      entrypoint,
      cwd: REPO_ROOT,
      caData: loadKubeConfig({ kubeconfig: kube.kubeconfigs.admin }).cluster?.caData ?? '',
      overrides: {
        // The only differences from the Pod. Other tests share this cluster: reconcile the sample's
        // namespace only. Several processes share this host: any free port instead of :8080.
        JANUS_WATCH_NAMESPACE: 'janus-sample',
        JANUS_METRICS_BIND_ADDRESS: '127.0.0.1:0',
      },
    });
    expect(pod.env.JANUS_REPO).toBe(repo);
    expect(await readFile(pod.env.JANUS_GIT_TOKEN_FILE ?? '', 'utf8')).toBe(
      'not-needed-for-a-local-repository',
    );
    expect(pod.env.JANUS_CONTROLLER_NAMESPACE).toBe('janus-system');

    const samples = kubectl('apply', '-k', 'manifests/samples/');
    expect(samples.status, samples.stderr).toBe(0);
    const txn = await eventually(
      async () => {
        if (pod?.child.exitCode !== null)
          throw new Error(`the container exited:\n${await readFile(pod?.logFile ?? '', 'utf8')}`);
        const current = (await clients.admin.get({
          apiVersion: 'tx.janus.io/v1alpha1',
          kind: 'Transaction',
          name: 'hello',
          namespace: 'janus-sample',
        })) as unknown as Transaction;
        expect(current.status?.phase).toBe('Committed');
        return current;
      },
      { timeoutMs: 120_000 },
    );
    expect(txn.status?.progress).toBe('2/2');
    const greeting = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'greeting',
      namespace: 'janus-sample',
    });
    expect(greeting.data).toEqual({ message: 'Hello from Janus' });

    // The probes the kubelet would call answer on the operations server.
    const url = await eventually(async () => {
      const found = /"url":"(http:[^"]+)","msg":"operations server listening"/.exec(
        await readFile(pod?.logFile ?? '', 'utf8'),
      )?.[1];
      if (!found) throw new Error('the operations server has not started yet');
      return found;
    });
    for (const path of ['/readyz', '/healthz']) {
      await eventually(async () => expect((await fetch(`${url}${path}`)).status).toBe(200));
    }

    // SIGTERM, as on a rolling update: a clean exit.
    pod.child.kill('SIGTERM');
    expect(await pod.exited).toBe(0);
  });
});
