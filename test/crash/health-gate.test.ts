/**
 * The health gate is as crash-safe as the rest of the saga: a controller killed at the gate's
 * steps from the commit point on (the Deployment's commit, entering the check, a status write of
 * it, the verdict, the rollback and its own check, the release) resumes to the end an
 * uninterrupted run reaches. Every request of both sagas is killed in memory
 * (test/unit/crash/health-gate.test.ts).
 */
import { describe, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { killedAtGatePoints, rollout } from '../support/crash/gate-crash.ts';
import type { PointSpec } from '../support/crash/request-log.ts';

const clients = useClients();

const STATUS = '/transactions/gated/status';
const COMMITTED: PointSpec = {
  name: 'Deployment committed',
  phase: 'Committing',
  method: 'PATCH',
  path: '/deployments/web',
};

describe('a health gate killed at its steps', () => {
  it('that ends healthy: Committed, the new version running', { timeout: 1_200_000 }, async () => {
    await killedAtGatePoints(
      clients,
      'ok',
      rollout(clients, POD_IMAGES.readyAlternative, 'Committed'),
      {
        deployment: { image: POD_IMAGES.readyAlternative, available: 2, updated: 2, replicas: 2 },
        config: { release: 'v2' },
      },
      [
        COMMITTED,
        { name: 'check written', phase: 'Verifying', method: 'PATCH', path: STATUS },
        { name: 'locks released', phase: 'Committed', method: 'DELETE', path: '/leases' },
      ],
    );
  });

  it('that ends unhealthy: RolledBack, the old version running', { timeout: 1_200_000 }, async () => {
    await killedAtGatePoints(
      clients,
      'bad',
      rollout(clients, POD_IMAGES.crashLoop, 'RolledBack'),
      {
        deployment: { image: POD_IMAGES.ready, available: 2, updated: 2, replicas: 2 },
        config: { release: 'v1' },
      },
      [
        COMMITTED,
        { name: 'store read', phase: 'RollingBack', method: 'GET', path: '/configmaps/gated-rollback' },
        { name: 'Deployment undone', phase: 'RollingBack', method: 'PATCH', path: '/deployments/web' },
        { name: 'ConfigMap undone', phase: 'RollingBack', method: 'PATCH', path: '/configmaps/app-config' },
        { name: 'rollback check written', phase: 'RollingBack', method: 'PATCH', path: STATUS },
      ],
    );
  });
});
