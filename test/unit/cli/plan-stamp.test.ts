/** The plan's diff leaves out the applied-by stamp its dry run sends: it names no real Transaction yet. */
import { describe, expect, it } from 'vitest';
import { withCurrentStamp } from '../../../src/cli/plan-view.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const APPLIED_BY = 'tx.janus.io/applied-by';
const configMap = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app-config', namespace: 'shop', ...(annotations && { annotations }) },
  data: { mode: 'blue' },
});
const planned = (annotations: Record<string, string> = {}) =>
  configMap({ ...annotations, [APPLIED_BY]: 'shop/deploy-v2@00000000-0000-0000-0000-000000000000#0' });

describe('withCurrentStamp', () => {
  it("shows the target's own stamp, unchanged", () => {
    const current = configMap({ [APPLIED_BY]: 'shop/deploy-v1@u#0' });
    expect(withCurrentStamp(planned({ team: 'shop' }), current)?.metadata.annotations).toEqual({
      team: 'shop',
      [APPLIED_BY]: 'shop/deploy-v1@u#0',
    });
  });

  it('shows no stamp where the target has none, and no empty annotations', () => {
    expect(withCurrentStamp(planned({ team: 'shop' }), configMap())?.metadata.annotations).toEqual({
      team: 'shop',
    });
    expect(withCurrentStamp(planned(), undefined)?.metadata).not.toHaveProperty('annotations');
  });

  it('leaves a deletion a deletion', () => {
    expect(withCurrentStamp(undefined, configMap())).toBeUndefined();
  });
});
