/**
 * What a request to the API server carries: the TLS material of the cluster and user entries, and
 * the auth headers, which may change over time (rotated token files, exec plugins' short-lived
 * tokens), so they are asked for again when the connection refreshes them.
 */
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import { type KubeConfig, KubeConfigError, type KubeUser } from './kubeconfig.ts';

export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface Credentials {
  readonly tls: TlsOptions;
  headers(): Promise<Record<string, string>>;
}

export async function credentialsFor(config: KubeConfig): Promise<Credentials> {
  const user = config.user;
  return user && needsClientNode(user) ? clientNodeCredentials(config) : staticCredentials(config);
}

/** Credentials that take code to obtain or apply: client-node's KubeConfig knows them all. */
function needsClientNode(user: KubeUser): boolean {
  return Boolean(user.exec || user.authProvider || user.username || user.impersonateUser);
}

/** Certificates and bearer tokens, read from the kubeconfig and the files it names. */
function staticCredentials(config: KubeConfig): Credentials {
  const cluster = config.cluster;
  const user = config.user;
  const pem = (data: string | undefined | null, file: string | undefined | null, what: string) => {
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    if (!file) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new KubeConfigError(
        `kubeconfig ${config.source}: cannot read ${what} ${file}: ${(e as Error).message}`,
      );
    }
  };
  const ca = pem(cluster?.caData, cluster?.caFile, 'certificate-authority');
  const cert = pem(user?.certData, user?.certFile, 'client-certificate');
  const key = pem(user?.keyData, user?.keyFile, 'client-key');
  const tls: TlsOptions = {
    ...(ca !== undefined && { ca }),
    ...(cert !== undefined && { cert }),
    ...(key !== undefined && { key }),
    ...(cluster?.skipTLSVerify && { rejectUnauthorized: false }),
    ...(cluster?.tlsServerName && { servername: cluster.tlsServerName }),
  };
  return {
    tls,
    async headers() {
      const token = user?.tokenFile ? readFileSync(user.tokenFile, 'utf8').trim() : user?.token;
      return token ? { Authorization: `Bearer ${token}` } : {};
    },
  };
}

async function clientNodeCredentials(config: KubeConfig): Promise<Credentials> {
  const { KubeConfig: ClientNodeConfig } = await import('@kubernetes/client-node');
  const kc = new ClientNodeConfig();
  kc.loadFromOptions({
    clusters: [...config.clusters],
    users: [...config.users],
    contexts: [...config.contexts],
    currentContext: config.currentContext,
  });
  const apply = async () => {
    const opts: https.RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (e) {
      // An exec plugin that is not installed or fails, an expired auth provider: say whose.
      throw new KubeConfigError(
        `kubeconfig ${config.source}: cannot get the credentials of user "${config.user?.name}": ${(e as Error).message}`,
        { cause: e },
      );
    }
    return opts;
  };
  const first = await apply();
  const text = (v: unknown) => (v === undefined ? undefined : String(v));
  const tls: TlsOptions = {
    ...(first.ca !== undefined && { ca: text(first.ca) as string }),
    ...(first.cert !== undefined && { cert: text(first.cert) as string }),
    ...(first.key !== undefined && { key: text(first.key) as string }),
    ...(first.rejectUnauthorized !== undefined && { rejectUnauthorized: first.rejectUnauthorized }),
    ...(first.servername !== undefined && { servername: first.servername }),
  };
  // client-node caches exec plugins' tokens until they expire, so asking again is cheap.
  return { tls, headers: async () => headersOf(await apply()) };
}

function headersOf(opts: https.RequestOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.headers ?? {})) {
    if (value !== undefined) out[key] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  if (opts.auth) out.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return out;
}
