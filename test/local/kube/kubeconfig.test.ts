import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { credentialsFor } from '../../../src/kube/credentials.ts';
import { inClusterConfig, loadKubeConfig, parseKubeConfig } from '../../../src/kube/kubeconfig.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'janus-kubeconfig-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function kubeconfig(user: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'prod', cluster: { server: 'https://prod.example:6443/', 'certificate-authority': 'ca.pem' } },
      {
        name: 'dev',
        cluster: {
          server: 'https://dev.example:6443',
          'certificate-authority-data': Buffer.from(PEM).toString('base64'),
          'insecure-skip-tls-verify': true,
          'tls-server-name': 'api.dev',
        },
      },
    ],
    users: [{ name: 'me', user }],
    contexts: [
      { name: 'prod', context: { cluster: 'prod', user: 'me', namespace: 'shop' } },
      { name: 'dev', context: { cluster: 'dev', user: 'me' } },
    ],
    'current-context': 'prod',
    ...extra,
  });
}

/** The kubeconfig above, parsed as if it were `dir`/config, in the dev context. */
function devContext(user: Record<string, unknown>) {
  return parseKubeConfig(kubeconfig(user), join(dir, 'config')).withContext('dev');
}

async function write(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('loadKubeConfig', () => {
  it('reads the current context, its cluster, user and namespace; relative files are beside the kubeconfig', async () => {
    const file = await write('config', kubeconfig({ token: 'abc', 'client-certificate': 'sub/me.crt' }));
    const config = loadKubeConfig({ kubeconfig: file });
    expect(config.cluster).toMatchObject({ name: 'prod', server: 'https://prod.example:6443' });
    expect(config.cluster?.caFile).toBe(join(dir, 'ca.pem'));
    expect(config.user?.certFile).toBe(join(dir, 'sub/me.crt'));
    expect(config.namespace).toBe('shop');
  });

  it('switches to another context, and names the file when the context does not exist', async () => {
    const file = await write('config', kubeconfig({ token: 'abc' }));
    expect(loadKubeConfig({ kubeconfig: file, context: 'dev' }).cluster?.name).toBe('dev');
    expect(() => loadKubeConfig({ kubeconfig: file, context: 'staging' })).toThrow(
      `kubeconfig ${file} has no context "staging"`,
    );
  });

  it('says which file is unreadable, broken or incomplete', async () => {
    const missing = join(dir, 'nope');
    expect(() => loadKubeConfig({ kubeconfig: missing })).toThrow(`cannot read kubeconfig ${missing}`);
    const broken = await write('broken', 'clusters: [');
    expect(() => loadKubeConfig({ kubeconfig: broken })).toThrow(`kubeconfig ${broken} is not valid YAML`);
    const noServer = await write('no-server', stringify({ clusters: [{ name: 'x', cluster: {} }] }));
    expect(() => loadKubeConfig({ kubeconfig: noServer })).toThrow('clusters[0].cluster.server is missing');
    const noContext = await write('no-context', kubeconfig({}, { 'current-context': 'gone' }));
    expect(() => loadKubeConfig({ kubeconfig: noContext })).toThrow(
      `kubeconfig ${noContext} has no cluster for context "gone"`,
    );
  });

  it('merges $KUBECONFIG files as kubectl does: the first to define a name or the current context wins', async () => {
    const first = await write(
      'first',
      stringify({
        clusters: [{ name: 'prod', cluster: { server: 'https://first.example' } }],
        users: [{ name: 'me', user: { token: 'first' } }],
      }),
    );
    const second = await write('second', kubeconfig({ token: 'second' }));
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = `${first}:${second}`;
    try {
      const config = loadKubeConfig();
      expect(config.currentContext).toBe('prod');
      expect(config.cluster?.server).toBe('https://first.example');
      expect(config.user?.token).toBe('first');
      expect(config.source).toBe(`${first}:${second}`);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });
});

describe('inClusterConfig', () => {
  const env = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  afterEach(() => {
    for (const [name, value] of [
      ['KUBERNETES_SERVICE_HOST', env.host],
      ['KUBERNETES_SERVICE_PORT', env.port],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('uses the ServiceAccount folder and re-reads the token, which the kubelet rotates', async () => {
    process.env.KUBERNETES_SERVICE_HOST = 'fd00::1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    await write('token', 'first-token\n');
    await write('ca.crt', PEM);
    await write('namespace', 'janus-system');
    const config = inClusterConfig(dir);
    expect(config?.cluster?.server).toBe('https://[fd00::1]:443');
    expect(config?.namespace).toBe('janus-system');
    if (!config) throw new Error('no in-cluster config');
    const credentials = await credentialsFor(config);
    expect(credentials.tls.ca).toBe(PEM);
    expect(await credentials.headers()).toEqual({ Authorization: 'Bearer first-token' });
    await write('token', 'rotated-token\n');
    expect(await credentials.headers()).toEqual({ Authorization: 'Bearer rotated-token' });
  });

  it('is not used outside a pod', () => {
    delete process.env.KUBERNETES_SERVICE_HOST;
    expect(inClusterConfig(dir)).toBeUndefined();
  });
});

describe('credentialsFor', () => {
  it('takes TLS settings from the cluster and a bearer token from the user', async () => {
    const config = devContext({ token: 'abc' });
    const credentials = await credentialsFor(config);
    expect(credentials.tls).toEqual({ ca: PEM, rejectUnauthorized: false, servername: 'api.dev' });
    expect(await credentials.headers()).toEqual({ Authorization: 'Bearer abc' });
  });

  it("re-reads kubectl's tokenFile", async () => {
    await write('token', 'one');
    const config = devContext({ tokenFile: 'token' });
    const credentials = await credentialsFor(config);
    expect(await credentials.headers()).toEqual({ Authorization: 'Bearer one' });
    await write('token', 'two');
    expect(await credentials.headers()).toEqual({ Authorization: 'Bearer two' });
  });

  it('names the certificate file it cannot read', async () => {
    const config = parseKubeConfig(kubeconfig({ token: 'abc' }), join(dir, 'config'));
    await expect(credentialsFor(config)).rejects.toThrow(
      `kubeconfig ${join(dir, 'config')}: cannot read certificate-authority ${join(dir, 'ca.pem')}`,
    );
  });

  it('runs an exec plugin through client-node', async () => {
    const plugin = await write(
      'plugin.sh',
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'\n`,
    );
    await chmod(plugin, 0o755);
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' };
    const config = devContext({ exec });
    const credentials = await credentialsFor(config);
    expect(credentials.tls.rejectUnauthorized).toBe(false);
    expect(await credentials.headers()).toMatchObject({ Authorization: 'Bearer from-plugin' });
  });
});
