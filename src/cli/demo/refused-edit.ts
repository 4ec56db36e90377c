/**
 * A person's `kubectl edit` of what a Transaction holds, in its bake window (docs/security.md,
 * "Locks that block"): the real kubectl when there is one (the local control plane's, or one on
 * PATH), with an editor that sets the Deployment's replicas; without one, the same PATCH, made
 * here. Either way what is shown is the API server's answer.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PatchType } from '../../kube/client.ts';
import { KubeApiError } from '../../kube/errors.ts';
import type { Objects } from '../../kube/resources.ts';

export interface EditAttempt {
  /** What the person ran. */
  command: string;
  refused: boolean;
  /** The API server's answer, as the person saw it (kubectl's first line of error). */
  answer: string;
}

/** kubectl in `binDir` (the local control plane's), else on PATH; undefined when there is none. */
export function findKubectl(binDir: string | undefined): string | undefined {
  const local = binDir && join(binDir, 'kubectl');
  if (local && existsSync(local)) return local;
  return spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0
    ? 'kubectl'
    : undefined;
}

/** The editor kubectl runs on the object's YAML: five replicas instead of what is there. */
const EDITOR = "sed -i.orig -e 's/^  replicas: .*/  replicas: 5/'";

export async function editDeployment(opts: {
  kubectl: string | undefined;
  kubeconfig: string;
  admin: Objects;
  namespace: string;
  name: string;
}): Promise<EditAttempt> {
  const command = `kubectl edit deployment ${opts.name} -n ${opts.namespace}`;
  if (opts.kubectl) {
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        opts.kubectl as string,
        ['--kubeconfig', opts.kubeconfig, 'edit', 'deployment', opts.name, '-n', opts.namespace],
        { env: { ...process.env, KUBE_EDITOR: EDITOR }, timeout: 60_000 },
        (error, _stdout, stderr) => resolve({ code: error ? 1 : 0, stderr }),
      );
    });
    const answer =
      result.stderr.split('\n').find((line) => line.startsWith('error:')) ?? result.stderr.trim();
    return { command, refused: result.code !== 0, answer: answer || 'deployment.apps/web edited' };
  }
  try {
    await opts.admin.patch(
      { apiVersion: 'apps/v1', kind: 'Deployment', name: opts.name, namespace: opts.namespace },
      { spec: { replicas: 5 } },
      PatchType.merge,
    );
    return {
      command: `${command}   (no kubectl here: its PATCH, made directly)`,
      refused: false,
      answer: 'accepted',
    };
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e;
    return {
      command: `${command}   (no kubectl here: its PATCH, made directly)`,
      refused: true,
      answer: `error: ${e.serverMessage}`,
    };
  }
}
