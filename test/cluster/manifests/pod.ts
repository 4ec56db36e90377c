/**
 * Runs a Deployment's container as a local process, the way the kubelet would start it: the
 * image's ENTRYPOINT with the container's args, its env (values, Secret and ConfigMap keys, the
 * downward API), its volumes as folders, and a token for its ServiceAccount. For a control plane
 * without nodes, where the Pod itself never runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';

export interface Container {
  name: string;
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}

export interface PodSpec {
  serviceAccountName?: string;
  containers: Container[];
  volumes?: { name: string; emptyDir?: object; secret?: { secretName: string } }[];
}

export interface PodProcess {
  readonly child: ChildProcess;
  readonly logFile: string;
  readonly env: Record<string, string>;
  readonly exited: Promise<number | string>;
}

type Data = Record<string, string>;

async function dataOf(
  objects: Objects,
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
): Promise<Data> {
  const obj = await objects.get({ apiVersion: 'v1', kind, namespace, name });
  const data = (obj.data ?? {}) as Data;
  return kind === 'Secret'
    ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]))
    : data;
}

/**
 * The container's environment as the kubelet computes it (envFrom first, then env); `local` maps
 * the paths written in the manifest, which are paths inside the Pod.
 */
async function environment(
  objects: Objects,
  namespace: string,
  container: Container,
  local: (path: string) => string,
): Promise<Data> {
  const env: Data = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef)
      Object.assign(env, await dataOf(objects, 'ConfigMap', namespace, source.configMapRef.name));
    if (source.secretRef)
      Object.assign(env, await dataOf(objects, 'Secret', namespace, source.secretRef.name));
  }
  for (const v of container.env ?? []) {
    const from = v.valueFrom;
    if (v.value !== undefined) env[v.name] = local(v.value);
    else if (from?.secretKeyRef)
      env[v.name] =
        (await dataOf(objects, 'Secret', namespace, from.secretKeyRef.name))[from.secretKeyRef.key] ?? '';
    else if (from?.configMapKeyRef)
      env[v.name] =
        (await dataOf(objects, 'ConfigMap', namespace, from.configMapKeyRef.name))[
          from.configMapKeyRef.key
        ] ?? '';
    else if (from?.fieldRef?.fieldPath === 'metadata.namespace') env[v.name] = namespace;
    else throw new Error(`env ${v.name}: this emulation does not support ${JSON.stringify(from)}`);
  }
  return env;
}

/** Each volume mount as a folder; Secret volumes hold one file per key. Returns mountPath → folder. */
async function mountVolumes(
  objects: Objects,
  namespace: string,
  spec: PodSpec,
  container: Container,
  root: string,
) {
  const mounts = new Map<string, string>();
  for (const mount of container.volumeMounts ?? []) {
    const volume = spec.volumes?.find((v) => v.name === mount.name);
    const dir = join(root, 'volumes', mount.name);
    await mkdir(dir, { recursive: true });
    if (volume?.secret) {
      for (const [key, value] of Object.entries(
        await dataOf(objects, 'Secret', namespace, volume.secret.secretName),
      )) {
        await writeFile(join(dir, key), value, { mode: 0o440 });
      }
    } else if (!volume?.emptyDir) {
      throw new Error(`volume ${mount.name}: this emulation supports emptyDir and secret volumes`);
    }
    mounts.set(mount.mountPath, dir);
  }
  return mounts;
}

/** A kubeconfig with a TokenRequest token for the ServiceAccount: what the kubelet mounts in the Pod. */
async function serviceAccountKubeconfig(
  objects: Objects,
  namespace: string,
  name: string,
  caData: string,
  path: string,
) {
  const review = await objects.client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const server = objects.client.connection.server.toString().replace(/\/$/, '');
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'certificate-authority-data': caData } }],
      users: [{ name: name, user: { token: review.status.token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: name } }],
      'current-context': 'c',
    }),
  );
}

export async function runContainer(opts: {
  objects: Objects;
  deployment: KubeObject;
  /** The image's ENTRYPOINT; the container's args follow it. */
  entrypoint: string[];
  /** The image's WORKDIR, here the repository. */
  cwd: string;
  caData: string;
  /** Differences from the Pod that a shared test cluster needs, each one explained by the caller. */
  overrides: Data;
}): Promise<PodProcess> {
  const namespace = opts.deployment.metadata.namespace ?? 'default';
  const spec = (opts.deployment.spec as { template: { spec: PodSpec } }).template.spec;
  const container = spec.containers[0];
  if (!container) throw new Error('the Deployment has no container');
  const root = await mkdtemp(join(tmpdir(), 'janus-pod-'));
  const mounts = await mountVolumes(opts.objects, namespace, spec, container, root);
  // Paths inside the Pod point into the folders standing in for its volumes.
  const local = (value: string) => {
    for (const [mountPath, dir] of mounts) {
      if (value === mountPath || value.startsWith(`${mountPath}/`))
        return dir + value.slice(mountPath.length);
    }
    return value;
  };
  const env = { ...(await environment(opts.objects, namespace, container, local)), ...opts.overrides };
  const kubeconfig = join(root, 'kubeconfig');
  await serviceAccountKubeconfig(
    opts.objects,
    namespace,
    spec.serviceAccountName ?? 'default',
    opts.caData,
    kubeconfig,
  );
  const [command = '', ...entryArgs] = opts.entrypoint;
  const logFile = join(root, 'container.log');
  const log = createWriteStream(logFile);
  const child = spawn(
    command === 'node' ? process.execPath : command,
    [...entryArgs, ...(container.args ?? [])],
    {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: join(root, 'home'), ...env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? '?')),
  );
  return { child, logFile, env, exited };
}
