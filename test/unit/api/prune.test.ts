/** What a source never prunes, though its render dropped it (docs/sources.md). */
import { describe, expect, it } from 'vitest';
import { ANNOTATION_PRUNE, NEVER_PRUNED_TEXT, neverPruned } from '../../../src/api/v1alpha1/index.ts';

describe('neverPruned', () => {
  it('keeps Namespaces and CustomResourceDefinitions: deleting one deletes everything in it', () => {
    expect(neverPruned({ group: '', kind: 'Namespace' })).toBe('Namespace');
    expect(neverPruned({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' })).toBe(
      'CustomResourceDefinition',
    );
  });

  it('keeps what its render annotated tx.janus.io/prune: disabled', () => {
    const annotations = { [ANNOTATION_PRUNE]: 'disabled' };
    expect(neverPruned({ group: 'apps', kind: 'Deployment', annotations })).toBe('PruneDisabled');
    expect(NEVER_PRUNED_TEXT.PruneDisabled).toBe('its render set tx.janus.io/prune: disabled');
  });

  it('prunes everything else, look-alikes of another group and other annotation values included', () => {
    expect(neverPruned({ group: 'apps', kind: 'Deployment' })).toBeUndefined();
    expect(neverPruned({ group: 'example.com', kind: 'Namespace' })).toBeUndefined();
    expect(neverPruned({ group: '', kind: 'CustomResourceDefinition' })).toBeUndefined();
    expect(
      neverPruned({ group: '', kind: 'ConfigMap', annotations: { [ANNOTATION_PRUNE]: 'Disabled' } }),
    ).toBeUndefined();
  });
});
