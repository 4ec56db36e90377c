/** Applies the project's manifests to a test cluster, as `kubectl apply --server-side` would. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isNotFound } from '../../src/kube/errors.ts';
import type { KubeObject, Objects } from '../../src/kube/resources.ts';
import { eventually } from './eventually.ts';

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
    await objects.apply(obj, { fieldManager: 'janus-test-setup', force: true });
    if (obj.kind === 'CustomResourceDefinition') await waitForEstablished(objects, obj.metadata.name);
  }
}

async function waitForEstablished(objects: Objects, name: string): Promise<void> {
  await eventually(async () => {
    const crd = await objects.get<
      KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
    >({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name,
    });
    const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (!established) throw new Error(`CRD ${name} not established yet`);
  });
}

export async function deleteIfExists(objects: Objects, obj: KubeObject): Promise<void> {
  try {
    await objects.delete({
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

export const REPO_ROOT = join(import.meta.dirname, '../..');
