/** One 10-change transaction, from create to Committed. */
import { cmTarget, configMap, getTxn, transaction } from '../support/cluster/saga.ts';
import { type Bench, timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

export async function latency(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const observed: number[] = [];
  const serverSide: number[] = [];
  const ns = await b.namespace('latency');
  for (let i = 0; i < 10; i++) await b.admin.create(configMap(ns, `cm-${i}`, { v: '0' }));
  const controller = await b.controller(ns);
  for (let r = 0; r < runs; r++) {
    const name = `ten-${r}`;
    await b.admin.create(
      transaction(
        ns,
        name,
        Array.from({ length: 10 }, (_, i) => ({
          target: cmTarget(`cm-${i}`),
          type: 'Patch' as const,
          content: { data: { v: String(r + 1) } },
        })),
      ),
    );
    observed.push(
      await timeUntil(async () => (await getTxn(b.admin, ns, name)).status?.phase === 'Committed'),
    );
    const status = (await getTxn(b.admin, ns, name)).status;
    serverSide.push(Date.parse(status?.completedAt ?? '') - Date.parse(status?.startedAt ?? ''));
    // The next run waits for this one's locks to be released.
    await timeUntil(async () => !(await getTxn(b.admin, ns, name)).metadata.finalizers?.length);
  }
  await controller.stop();
  return {
    '10-change transaction, created → Committed (observed by a client)': figure(observed, 'ms'),
    '10-change transaction, startedAt → completedAt': figure(serverSide, 'ms'),
  };
}
