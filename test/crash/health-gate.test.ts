/**
 * The health gate is as crash-safe as the rest of the saga: a controller killed after any API
 * request it makes from the commit point on (the commits, the watches' LISTs, the status writes,
 * the rollback and its own check) resumes to the end an uninterrupted run reaches. Earlier
 * requests (prepare) are killed at every step by commit.test.ts and rollback.test.ts.
 */
import { describe, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { killedAtEveryGateRequest, rollout } from '../support/crash/gate-crash.ts';

const clients = useClients();

describe('a health gate killed after every API request', () => {
  it('that ends healthy: Committed, the new version running', { timeout: 1_200_000 }, async () => {
    await killedAtEveryGateRequest(
      clients,
      'ok',
      rollout(clients, POD_IMAGES.readyAlternative, 'Committed'),
      {
        deployment: { image: POD_IMAGES.readyAlternative, available: 2, updated: 2, replicas: 2 },
        config: { release: 'v2' },
      },
    );
  });

  it('that ends unhealthy: RolledBack, the old version running', { timeout: 1_200_000 }, async () => {
    await killedAtEveryGateRequest(clients, 'bad', rollout(clients, POD_IMAGES.crashLoop, 'RolledBack'), {
      deployment: { image: POD_IMAGES.ready, available: 2, updated: 2, replicas: 2 },
      config: { release: 'v1' },
    });
  });
});
