/** A local HTTP server standing in for an API server, and a client of it as a kubeconfig would make one. */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { KubeClient } from '../../../src/kube/client.ts';
import { Connection } from '../../../src/kube/connection.ts';
import { KubeConfig } from '../../../src/kube/kubeconfig.ts';

/** Registers the cleanup; each call of the returned function starts a server answering with `handler`. */
export function useLocalServer(): (handler: RequestListener) => Promise<KubeClient> {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });
  return async (handler) => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const config = new KubeConfig(
      [{ name: 'local', server: `http://127.0.0.1:${port}`, skipTLSVerify: false }],
      [{ name: 'nobody' }],
      [{ name: 'local', cluster: 'local', user: 'nobody' }],
      'local',
      'test',
    );
    return new KubeClient(await Connection.fromKubeConfig(config));
  };
}
