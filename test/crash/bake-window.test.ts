/**
 * The bake window (health.stableFor) lives in the status alone: a controller killed anywhere in
 * it, before or after the write that opens it, resumes counting from status.health.stableSince.
 * Kills start after the write that enters Verifying: the requests before it (commits, the gate's
 * first look) are the same as an unbaked rollout's, killed at every step by health-gate.test.ts.
 * A file of its own, so that the two long crash files run side by side.
 */
import { describe, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { killedAtEveryGateRequest, rollout } from '../support/crash/gate-crash.ts';

const clients = useClients();

describe('a baked health gate killed after every API request', () => {
  it(
    'with a bake window, a rollout that crash-loops inside it: RolledBack, the old version running',
    { timeout: 1_800_000 },
    () => killedWhileBaking('bake', POD_IMAGES.flapping, '1m', 'RolledBack', POD_IMAGES.ready, 'v1'),
  );

  it(
    'with a bake window, a healthy rollout: Committed once the window has passed',
    { timeout: 1_800_000 },
    () =>
      killedWhileBaking(
        'baked',
        POD_IMAGES.readyAlternative,
        '10s',
        'Committed',
        POD_IMAGES.readyAlternative,
        'v2',
      ),
  );
});

function killedWhileBaking(
  label: string,
  image: string,
  stableFor: string,
  phase: 'Committed' | 'RolledBack',
  running: string,
  release: string,
) {
  return killedAtEveryGateRequest(
    clients,
    label,
    rollout(clients, image, phase, { timeout: '2m', stableFor }),
    {
      deployment: { image: running, available: 2, updated: 2, replicas: 2 },
      config: { release },
    },
    'Verifying',
  );
}
