import { expect, it } from 'vitest';
import { useLocalServer } from './local-server.ts';

const clientOf = useLocalServer();

it('decodes a watch stream whose chunks split a UTF-8 character', async () => {
  const line = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'café' } } })}\n`);
  const cut = line.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
  const client = await clientOf((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(line.subarray(0, cut));
    setTimeout(() => res.end(line.subarray(cut)), 50);
  });
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
