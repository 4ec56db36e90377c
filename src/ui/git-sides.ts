/**
 * The Git sides of `janus run` in the controller namespace (their control ConfigMaps), and the
 * page's suspend and resume: the annotations `janus suspend` and `janus resume` write
 * (gitops/git-control.ts), sent as the user, so RBAC on that ConfigMap decides.
 */
import {
  ANNOTATION_POLL_REQUESTED_AT,
  GIT_CONTROL_SELECTOR,
  type GitSideState,
  gitSideStateOf,
  RESUME_ANNOTATIONS,
  suspendAnnotations,
} from '../gitops/git-control.ts';
import { PatchType } from '../kube/client.ts';
import type { Objects } from '../kube/resources.ts';
import { whoAmI } from '../kube/who-am-i.ts';

export async function listGitSides(objects: Objects, namespace: string): Promise<GitSideState[]> {
  const list = await objects.list('v1', 'ConfigMap', namespace, { labelSelector: GIT_CONTROL_SELECTOR });
  return list.items.map((item) => gitSideStateOf({ ...item, apiVersion: 'v1', kind: 'ConfigMap' }));
}

/** Suspends (`reason` given) or resumes one Git side; resuming also asks for a poll, as `janus resume`. */
export async function setSuspended(
  objects: Objects,
  namespace: string,
  name: string,
  suspend: { reason: string | undefined } | false,
): Promise<GitSideState> {
  const side = (await listGitSides(objects, namespace)).find((s) => s.name === name);
  if (!side) throw new RangeError(`no Git side ${namespace}/${name} (label ${GIT_CONTROL_SELECTOR})`);
  const now = new Date();
  const annotations = suspend
    ? suspendAnnotations(suspend.reason, await whoAmI(objects.client), now)
    : { ...RESUME_ANNOTATIONS, [ANNOTATION_POLL_REQUESTED_AT]: now.toISOString() };
  const updated = await objects.patch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace, name },
    { metadata: { annotations } },
    PatchType.merge,
  );
  return gitSideStateOf(updated);
}
