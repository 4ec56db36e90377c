/** A namespace of its own per test file, a deployer ServiceAccount, and a controller process watching it. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { TestClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  grantJanus,
  serviceAccount,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { type ControllerProcess, startController } from '../../support/processes/controller-process.ts';

export interface CliNamespace {
  readonly name: string;
  readonly controller: ControllerProcess;
}

export function useControlledNamespace(clients: TestClients, prefix: string): CliNamespace {
  const state = {} as { name: string; controller: ControllerProcess };
  beforeAll(async () => {
    state.name = `${prefix}-${randomBytes(3).toString('hex')}`;
    await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: state.name } });
    await grantJanus(clients.admin, state.name);
    await serviceAccount(clients.admin, state.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    state.controller = await startController({
      kubeconfig: clients.kubeconfigs.controller,
      namespace: state.name,
      logLevel: 'info',
    });
  });
  afterAll(async () => {
    await state.controller?.stop();
    await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: state.name }).catch(() => {});
  });
  return {
    get name() {
      return state.name;
    },
    get controller() {
      return state.controller;
    },
  };
}

/** Creates ConfigMaps `<prefix>-a` and `<prefix>-b` and a Transaction patching both, and waits for Committed. */
export async function committedTransaction(
  clients: TestClients,
  namespace: string,
  name: string,
): Promise<Transaction> {
  for (const suffix of ['a', 'b']) {
    await clients.admin.create(configMap(namespace, `${name}-${suffix}`, { value: 'before' }));
  }
  const changes: Change[] = ['a', 'b'].map((suffix) => ({
    target: { apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-${suffix}` },
    type: 'Patch',
    content: { data: { value: 'after' } },
  }));
  await clients.admin.create(transaction(namespace, name, changes));
  return waitForPhase(clients.admin, namespace, name, 'Committed');
}
