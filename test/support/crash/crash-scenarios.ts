/**
 * The two sagas the crash tests kill at every step: four changes of every type that commit, and
 * the same four plus a fifth refused at commit, which rolls the four back.
 */
import type { Objects } from '../../../src/kube/resources.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  fourChanges,
  fourTargets,
  serviceAccount,
  transaction,
} from '../cluster/saga.ts';
import type { Scenario } from './crash.ts';

const TARGETS = ['created', 'updated', 'patched', 'deleted', 'refused'];

function scenario(admin: Objects, withRefused: boolean): Scenario {
  return {
    phase: withRefused ? 'RolledBack' : 'Committed',
    async setup(namespace) {
      await serviceAccount(admin, namespace, 'deployer', [ALL_ON_CONFIGMAPS]);
      await fourTargets(admin, namespace);
    },
    transaction(namespace) {
      const list = fourChanges();
      if (withRefused)
        list.push({ target: cmTarget('refused'), type: 'Create', content: { data: { no: 'pe' } } });
      return transaction(namespace, 'crashy', list);
    },
    async observe(namespace) {
      const out: Record<string, unknown> = {};
      for (const name of TARGETS) {
        const cm = await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace });
        out[name] = cm && {
          data: cm.data ?? {},
          appliedBy: cm.metadata.annotations?.['tx.janus.io/applied-by']
            ?.replace(/^[^/]+\//, '')
            .replace(/@.*#/, '#'),
        };
      }
      return out;
    },
  };
}

export const committingScenario = (admin: Objects) => scenario(admin, false);
export const rollingBackScenario = (admin: Objects) => scenario(admin, true);
export const REFUSED_OBJECT = 'refused';
