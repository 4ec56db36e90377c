/**
 * The project's manifests applied to a cluster, as `kubectl apply --server-side` would: the CRD
 * and the controller's RBAC from manifests/, and the example shop. The demo installs Janus with
 * them; the integration tests set up their cluster with the same code.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject, Objects } from '../../kube/resources.ts';
import { REPO_ROOT } from './control-plane-binaries.ts';

const ESTABLISHED_POLL_MS = 100;
const ESTABLISHED_TIMEOUT_MS = 60_000;

export async function readManifests(...paths: string[]): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const path of paths) {
    for (const doc of parseAllDocuments(await readFile(path, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]?.message}`);
      const obj = doc.toJS() as KubeObject | null;
      if (obj) out.push(obj);
    }
  }
  return out;
}

export async function applyManifests(objects: Objects, manifests: KubeObject[]): Promise<void> {
  for (const obj of manifests) {
    await objects.apply(obj, { fieldManager: 'janus-setup', force: true });
    if (obj.kind === 'CustomResourceDefinition') await waitForEstablished(objects, obj.metadata.name);
  }
}

/** A CRD's resources can be used once it is Established, shortly after it is created. */
async function waitForEstablished(objects: Objects, name: string): Promise<void> {
  const deadline = Date.now() + ESTABLISHED_TIMEOUT_MS;
  for (;;) {
    const crd = await objects.get<
      KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
    >({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not established within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, ESTABLISHED_POLL_MS));
  }
}

/** The CRD, the janus-system namespace and the controller's RBAC and policies, from manifests/. */
export function controllerManifests(): Promise<KubeObject[]> {
  return readManifests(
    join(REPO_ROOT, 'manifests/namespace.yaml'),
    join(REPO_ROOT, 'manifests/crd/transactions.tx.janus.io.yaml'),
    join(REPO_ROOT, 'manifests/crd/analysistemplates.tx.janus.io.yaml'),
    join(REPO_ROOT, 'manifests/crd/sources.tx.janus.io.yaml'),
    join(REPO_ROOT, 'manifests/crd/instanceclaims.tx.janus.io.yaml'),
    join(REPO_ROOT, 'manifests/crd/locktables.tx.janus.io.yaml'),
    ...[
      'service-account',
      'cluster-role',
      'cluster-role-binding',
      'role',
      'role-binding',
      'tenant-cluster-role',
      'source-viewer-cluster-role',
    ].map((file) => join(REPO_ROOT, `manifests/rbac/${file}.yaml`)),
    join(REPO_ROOT, 'manifests/policy/transaction-service-account.yaml'),
    join(REPO_ROOT, 'manifests/policy/transaction-instance.yaml'),
    join(REPO_ROOT, 'manifests/policy/transaction-provenance.yaml'),
    join(REPO_ROOT, 'manifests/policy/source-provenance.yaml'),
    join(REPO_ROOT, 'manifests/policy/locks.yaml'),
  );
}
