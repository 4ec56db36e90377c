/** Transactions and events the notify tests share. */
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { NotificationEvent } from '../../../src/notify/event.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

export const SOURCE_SHA = 'a1b2c3d'.padEnd(40, '0');
export const CONTEXT = { controllerVersion: '0.1.0', identity: 'janus' };
export const AT = '2026-11-25T12:00:00.000Z';

export function aRolledBack(namespace = 'shop'): Transaction {
  return aTransaction({
    namespace,
    name: 'release-42',
    uid: 'uid-42',
    annotations: sourceAnnotations({
      repository: 'https://git.example.com/platform/deploys.git',
      revision: `main@sha1:${SOURCE_SHA}`,
      path: 'transactions/release-42',
    }),
    changes: [
      { target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, type: 'Patch', content: {} },
      { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' }, type: 'Update', content: {} },
    ],
    status: {
      phase: 'RolledBack',
      completedAt: AT,
      items: [
        { target: 'apps/v1 Deployment shop/web', prepared: true, committed: true, rolledBack: true },
        { target: 'v1 ConfigMap shop/cfg', prepared: true, committed: true, rolledBack: true },
      ],
      conditions: [
        {
          type: 'RolledBack',
          status: 'True',
          reason: 'HealthCheckFailed',
          message: 'apps/v1 Deployment shop/web: pod web-7c9 is in CrashLoopBackOff\n(back-off 40s)',
          lastTransitionTime: AT,
        },
      ],
    },
  });
}

export function anEvent(fields: Partial<NotificationEvent> = {}): NotificationEvent {
  return {
    id: 'uid-42/RolledBack',
    namespace: 'shop',
    name: 'release-42',
    uid: 'uid-42',
    phase: 'RolledBack',
    severity: 'error',
    reason: 'apps/v1 Deployment shop/web: pod web-7c9 is in CrashLoopBackOff (back-off 40s)',
    changes: 2,
    progress: '2/2',
    errors: [],
    repository: 'https://git.example.com/platform/deploys.git',
    path: 'transactions/release-42',
    commit: SOURCE_SHA,
    time: AT,
    ...fields,
  };
}
