import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/index.ts';
import type { ProviderConfig } from '../../../src/notify/config.ts';
import { DeliveryQueue, type DeliveryResult } from '../../../src/notify/delivery.ts';
import type { Payload } from '../../../src/notify/payloads/index.ts';
import { DeliveryError } from '../../../src/notify/post.ts';

const provider = (name: string): ProviderConfig => ({
  name,
  type: 'slack',
  address: 'https://example.com',
  resolveAfterMs: 1,
  timeoutMs: 1,
});
const payload = (body: string): Payload => ({ contentType: 'application/json', body });
/** No waiting between tries: the tests are about counts and order, not time. */
const NO_WAIT = { baseMs: 0, capMs: 0, jitter: 0 };

function queue(post: (p: ProviderConfig, body: Payload) => Promise<void>, extra = {}) {
  const results: [string, DeliveryResult][] = [];
  const deliveries = new DeliveryQueue({
    post,
    onResult: (name, result) => results.push([name, result]),
    log: silentLogger(),
    retry: NO_WAIT,
    ...extra,
  });
  return { deliveries, results };
}

describe('DeliveryQueue', () => {
  it('retries what a retry may fix, a bounded number of times, counting each try', async () => {
    let tries = 0;
    const { deliveries, results } = queue(async () => {
      tries++;
      if (tries < 3) throw new DeliveryError('HTTP 503', true);
    });
    deliveries.enqueue(provider('slack'), payload('a'), 'e1');
    await deliveries.idle();
    expect(results).toEqual([
      ['slack', 'retried'],
      ['slack', 'retried'],
      ['slack', 'sent'],
    ]);

    const down = queue(
      async () => {
        throw new DeliveryError('HTTP 502', true);
      },
      { attempts: 4 },
    );
    down.deliveries.enqueue(provider('slack'), payload('a'), 'e1');
    await down.deliveries.idle();
    expect(down.results.map(([, r]) => r)).toEqual(['retried', 'retried', 'retried', 'failed']);
  });

  it('gives up at once on an answer a retry cannot change', async () => {
    const { deliveries, results } = queue(async () => {
      throw new DeliveryError('HTTP 404', false);
    });
    deliveries.enqueue(provider('teams'), payload('a'), 'e1');
    await deliveries.idle();
    expect(results).toEqual([['teams', 'failed']]);
  });

  it('delivers in order per provider, and a stuck provider holds only its own queue', async () => {
    const sent: string[] = [];
    let release: () => void = () => {};
    const stuck = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { deliveries } = queue(async (p, body) => {
      if (p.name === 'slow') await stuck;
      sent.push(`${p.name}:${body.body}`);
    });
    deliveries.enqueue(provider('slow'), payload('1'), 'e1');
    deliveries.enqueue(provider('fast'), payload('1'), 'e1');
    deliveries.enqueue(provider('slow'), payload('2'), 'e2');
    deliveries.enqueue(provider('fast'), payload('2'), 'e2');
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['fast:1', 'fast:2']);
    release();
    await deliveries.idle();
    expect(sent).toEqual(['fast:1', 'fast:2', 'slow:1', 'slow:2']);
  });

  it('drops and counts what exceeds the bound, never blocking the caller', async () => {
    const { deliveries, results } = queue(() => new Promise(() => {}), { maxQueued: 2 });
    expect(deliveries.enqueue(provider('p'), payload('1'), 'e1')).toBe(true);
    expect(deliveries.enqueue(provider('q'), payload('2'), 'e2')).toBe(true);
    expect(deliveries.enqueue(provider('p'), payload('3'), 'e3')).toBe(false);
    expect(results).toEqual([['p', 'dropped']]);
    expect(deliveries.size).toBe(2);
  });
});
