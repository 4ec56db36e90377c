/** The namespace the controller lives in, where its Lease, Git cursor and cluster-scoped locks go. */
import { existsSync, readFileSync } from 'node:fs';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The flag, else the pod's namespace (in a cluster), else janus-system. */
export function controllerNamespace(flag: string | undefined): string {
  if (flag) return flag;
  if (existsSync(IN_CLUSTER_NAMESPACE)) return readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim();
  return 'janus-system';
}
