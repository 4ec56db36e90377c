/**
 * How the user-facing commands (status, rollback, recover, plan) reach a cluster: the kubeconfig
 * and context kubectl would use, and the namespace kubectl would default to.
 */
import { KubeClient } from '../kube/client.ts';
import { loadKubeConfig } from '../kube/connection.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../kube/resources.ts';
import { VERSION } from '../version.ts';
import { type Flags, KUBE_FLAGS } from './command.ts';

export const NAMESPACE_FLAG = {
  namespace: {
    type: 'string',
    short: 'n',
    env: 'JANUS_NAMESPACE',
    placeholder: 'namespace',
    description:
      'the Transaction\'s namespace (default: the kubeconfig context\'s namespace, else "default")',
  },
} as const satisfies Flags;

/** Flags of every command that talks to the cluster as the person running it. */
export const CLUSTER_FLAGS = { ...KUBE_FLAGS, ...NAMESPACE_FLAG } as const;

export interface Cluster {
  client: KubeClient;
  objects: Objects;
  /** The namespace to work in: the flag, else the context's, else "default". */
  namespace: string;
  close(): Promise<void>;
}

export async function connect(
  values: { kubeconfig: string | undefined; context: string | undefined; namespace: string | undefined },
  command: string,
): Promise<Cluster> {
  const options = { kubeconfig: values.kubeconfig, context: values.context };
  const kubeConfig = loadKubeConfig(options);
  const contextNamespace = kubeConfig.namespace;
  const client = await KubeClient.load({ ...options, userAgent: `janus-${command}/${VERSION}` });
  const discovery = new Discovery(client);
  for (const mapping of CORE_MAPPINGS) discovery.seed(mapping);
  return {
    client,
    objects: new Objects(client, discovery),
    namespace: values.namespace || contextNamespace || 'default',
    close: () => client.connection.close(),
  };
}
