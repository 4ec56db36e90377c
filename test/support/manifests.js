import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isNotFound } from '../../src/kube/errors.js';
import { eventually } from './eventually.js';
export async function readManifests(...paths) {
  const out = [];
  for (const path of paths) {
    for (const doc of parseAllDocuments(await readFile(path, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]?.message}`);
      const obj = doc.toJS();
      if (obj) out.push(obj);
    }
  }
  return out;
}
export async function applyManifests(objects, manifests) {
  for (const obj of manifests) {
    await objects.apply(obj, { fieldManager: 'janus-test-setup', force: true });
    if (obj.kind === 'CustomResourceDefinition') await waitForEstablished(objects, obj.metadata.name);
  }
}
async function waitForEstablished(objects, name) {
  await eventually(async () => {
    const crd = await objects.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name,
    });
    const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (!established) throw new Error(`CRD ${name} not established yet`);
  });
}
export async function deleteIfExists(objects, obj) {
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
