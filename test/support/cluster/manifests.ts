/** Test-only manifest helpers; reading and applying manifests is src/cli/demo/manifests.ts. */
import { join } from 'node:path';
import { isNotFound } from '../../../src/kube/errors.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';

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

export const REPO_ROOT = join(import.meta.dirname, '../../..');
