/**
 * The bake window (health.stableFor) lives in the status alone: a controller killed inside it,
 * after the write that opened it, resumes counting from status.health.stableSince; killed on
 * entering the check or at the verdict, it ends as the uninterrupted run. Every request of both
 * sagas, each window's opening and ticks included, is killed in memory
 * (test/unit/crash/health-gate.test.ts). A file of its own, so that the long crash files run
 * side by side.
 */
import { describe, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { INSIDE_THE_WINDOW, killedAtGatePoints, rollout } from '../support/crash/gate-crash.ts';

const clients = useClients();

describe('a baked health gate killed inside its window', () => {
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
  return killedAtGatePoints(
    clients,
    label,
    rollout(clients, image, phase, { timeout: '2m', stableFor }),
    {
      deployment: { image: running, available: 2, updated: 2, replicas: 2 },
      config: { release },
    },
    [INSIDE_THE_WINDOW],
  );
}
