/**
 * The fixture many saga tests start from: a few ConfigMaps that exist, and one Transaction that
 * patches each of them the same way.
 */
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { cmTarget, configMap, transaction } from './saga.ts';

/** Creates ConfigMaps `names` in `namespace`, each holding `data(name)`. */
export async function createConfigMaps(
  admin: Objects,
  namespace: string,
  names: readonly string[],
  data: (name: string) => Record<string, string>,
): Promise<void> {
  for (const name of names) await admin.create(configMap(namespace, name, data(name)));
}

/** A Transaction `name` with one Patch per ConfigMap of `names`, each merging `data` into it. */
export function patchingEach(
  namespace: string,
  name: string,
  names: readonly string[],
  data: Record<string, string>,
  opts: Parameters<typeof transaction>[3] = {},
): Transaction {
  return transaction(
    namespace,
    name,
    names.map((target) => ({ target: cmTarget(target), type: 'Patch', content: { data } })),
    opts,
  );
}
