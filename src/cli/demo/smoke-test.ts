/**
 * The smoke test of release 4's story, played by the demo: kwok's pods serve nothing, so this
 * loopback service answers for the shop's checkout. It asks the cluster what the Deployment web
 * runs: with the new checkout switched on (env CHECKOUT_V2=true, examples/release-4) the checkout
 * "fails" (503), otherwise it answers 200. The transaction's analysis check queries it every 2 s
 * in the bake window; the controller is allowed this one address.
 */

import type { KubeObject, Objects } from '../../kube/resources.ts';
import { http } from '../../node-builtins.ts';

/** The address examples/release-4 names; the demo's copy of the directory points at the server instead. */
export const EXAMPLE_SMOKE_URL = 'http://smoke-test.shop.svc:8080/checkout';

export interface SmokeTest {
  /** http://127.0.0.1:<port>/checkout */
  readonly url: string;
  /** The allow-list entry for the controller: the server's origin. */
  readonly origin: string;
  /**
   * Until `failing()`, the checkout answers 200 whatever runs: the demo shows a person's edit
   * refused in the bake window before the broken checkout shows.
   */
  holdFailures(): void;
  failing(): void;
  close(): Promise<void>;
}

type Container = { name?: string; env?: { name?: string; value?: string }[] };

/** Whether the new checkout is on in the Deployment's template. */
export function checkoutV2On(web: KubeObject | undefined): boolean {
  const spec = (web as { spec?: { template?: { spec?: { containers?: Container[] } } } } | undefined)?.spec;
  return (spec?.template?.spec?.containers ?? []).some((c) =>
    (c.env ?? []).some((e) => e.name === 'CHECKOUT_V2' && e.value === 'true'),
  );
}

export async function startSmokeTest(admin: Objects): Promise<SmokeTest> {
  let held = false;
  const server = http.createServer((req, res) => {
    if (req.url !== '/checkout') {
      res.writeHead(404).end();
      return;
    }
    if (held) {
      res.writeHead(200).end('checkout ok (no order has reached the payment step yet)\n');
      return;
    }
    admin
      .find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' })
      .then((web) => {
        if (checkoutV2On(web)) res.writeHead(503).end('checkout v2: payment step answers 500\n');
        else res.writeHead(200).end('checkout ok\n');
      })
      .catch(() => res.writeHead(502).end('cannot read Deployment shop/web\n'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('smoke test: no port');
  const origin = `http://127.0.0.1:${address.port}`;
  return {
    url: `${origin}/checkout`,
    origin,
    holdFailures: () => {
      held = true;
    },
    failing: () => {
      held = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
