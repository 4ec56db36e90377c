/** The poller that drives the materializer: coalesced triggers, failures that never escape, readiness. */
import { describe, expect, it } from 'vitest';
import { Poller } from '../../../src/gitops/poller.ts';
import { silentLogger } from '../../../src/log/index.ts';

const HOUR = 3_600_000;

/** A poll that waits until released, counting its calls. */
function gatedPoll() {
  let calls = 0;
  let release: (() => void) | undefined;
  return {
    get calls() {
      return calls;
    },
    release: () => release?.(),
    poll: () => {
      calls++;
      return new Promise<string>((resolve) => {
        release = () => resolve('done');
      });
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('Poller', () => {
  it('polls at start, and coalesces triggers that arrive during a poll into one more poll', async () => {
    const gate = gatedPoll();
    const poller = new Poller({ poll: gate.poll, intervalMs: HOUR, log: silentLogger() });
    poller.start();
    expect(gate.calls).toBe(1);
    for (let i = 0; i < 5; i++) poller.trigger('webhook');
    gate.release();
    await settle();
    expect(gate.calls).toBe(2);
    gate.release();
    await settle();
    expect(gate.calls).toBe(2); // nothing else asked for a poll, and the next one is an hour away
    poller.trigger('webhook');
    expect(gate.calls).toBe(3);
    gate.release();
    await poller.stop();
    poller.trigger('webhook');
    expect(gate.calls).toBe(3);
  });

  it('counts and survives failed polls, and says so in its readiness', async () => {
    let now = 0;
    let fail = true;
    const results: string[] = [];
    const poller = new Poller({
      poll: async () => {
        if (fail) throw new Error('fetch https://git.example/repo.git: network error ECONNREFUSED');
        return 'ok';
      },
      intervalMs: HOUR,
      failureGraceMs: 60_000,
      metrics: { gitPoll: (result) => results.push(result) },
      log: silentLogger(),
      now: () => now,
    });
    poller.start();
    await settle();
    expect(results).toEqual(['error']);
    expect(poller.readiness()).toEqual({
      ok: false,
      detail:
        'no successful poll of the watched branch yet: fetch https://git.example/repo.git: network error ECONNREFUSED',
    });

    fail = false;
    poller.trigger('webhook');
    await settle();
    expect(results).toEqual(['error', 'success']);
    expect(poller.readiness().ok).toBe(true);

    fail = true;
    now = 1_000;
    poller.trigger('webhook');
    await settle();
    expect(poller.readiness().ok).toBe(true); // one failure is within the grace period
    now = 70_000;
    expect(poller.readiness()).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^polls failing for 69s: /),
    });
    await poller.stop();
  });

  it('reports a poller that stopped finishing polls as not ready', async () => {
    let now = 0;
    const poller = new Poller({
      poll: async () => 'ok',
      intervalMs: 30_000,
      log: silentLogger(),
      now: () => now,
    });
    poller.start();
    await settle();
    now = 3 * 30_000 + 60_000 + 1;
    expect(poller.readiness()).toEqual({ ok: false, detail: 'no poll finished for 150s' });
    await poller.stop();
  });
});
