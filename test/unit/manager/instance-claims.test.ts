/**
 * An installation's claim is released when it stops (src/manager/instance-claims.ts), so a
 * successor need not wait out the lease. A renewal still in flight when the process stops found
 * the claim deleted under it and created it again: the stopped installation's claim stayed fresh
 * for a whole lease (isolation-installations failed on it under load).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { API_VERSION, CLAIM_KIND } from '../../../src/api/v1alpha1/index.ts';
import { CLAIM_RENEW_MS, claimName, type Installation } from '../../../src/controller/instance-claim.ts';
import type { KubeRequest } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/index.ts';
import { InstanceClaims } from '../../../src/manager/instance-claims.ts';
import { FakeApi, type RequestGate } from '../../support/fake-api.ts';

const me: Installation = { controllerNamespace: 'janus-system', instance: 'blue', watchNamespace: 'shop' };
const claimPath = `/apis/tx.janus.io/v1alpha1/instanceclaims/${claimName(me)}`;

/** A gate that holds the first request matching `held` until the test lets it go. */
function holdOne(held: (req: KubeRequest) => boolean) {
  let reached!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const go = new Promise<void>((resolve) => {
    release = resolve;
  });
  let armed = false;
  const gate: RequestGate = async (req, serve) => {
    if (armed && held(req)) {
      armed = false;
      reached();
      await go;
    }
    return serve();
  };
  return { gate, arm: () => (armed = true), arrived, release };
}

describe('InstanceClaims.release', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('deletes the claim even when a renewal is in flight: the renewal does not write it again', async () => {
    const api = new FakeApi();
    const hold = holdOne((req) => req.method === 'PUT' && req.path === claimPath);
    const claims = await InstanceClaims.acquire({
      client: api.client(undefined, hold.gate),
      installation: me,
      log: silentLogger(),
    });
    const find = () => api.get({ apiVersion: API_VERSION, kind: CLAIM_KIND, name: claimName(me) });
    expect(await find()).toBeDefined();

    claims.start(() => {});
    hold.arm();
    await vi.advanceTimersByTimeAsync(CLAIM_RENEW_MS);
    await hold.arrived; // the renewal read the claim and its write (a PUT) is on the way

    // The stop comes while the write waits: whatever release() sends meanwhile is served first.
    const released = claims.release();
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    hold.release();
    await released;
    expect(await find()).toBeUndefined();
    // And nothing renews it later.
    await vi.advanceTimersByTimeAsync(3 * CLAIM_RENEW_MS);
    expect(await find()).toBeUndefined();
  });
});
