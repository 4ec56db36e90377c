import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { KubeClient } from '../../../src/kube/client.ts';
import { Connection } from '../../../src/kube/connection.ts';
import { KubeConfig } from '../../../src/kube/kubeconfig.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

it('decodes a watch stream whose chunks split a UTF-8 character', async () => {
  const line = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'café' } } })}\n`);
  const cut = line.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(line.subarray(0, cut));
    setTimeout(() => res.end(line.subarray(cut)), 50);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const config = new KubeConfig(
    [{ name: 'local', server: `http://127.0.0.1:${port}`, skipTLSVerify: false }],
    [{ name: 'nobody' }],
    [{ name: 'local', cluster: 'local', user: 'nobody' }],
    'local',
    'test',
  );
  const client = new KubeClient(await Connection.fromKubeConfig(config));
  const names: string[] = [];
  for await (const event of client.watch<{ metadata: { name: string } }>(
    '/api/v1/configmaps',
    {},
    new AbortController().signal,
  ))
    names.push(event.object.metadata.name);
  await client.connection.close();
  expect(names).toEqual(['café']);
});
