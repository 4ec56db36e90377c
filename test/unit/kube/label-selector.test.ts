import { describe, expect, it } from 'vitest';
import { selectorOf, selectorString, selects } from '../../../src/kube/label-selector.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const workload = (selector: unknown): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { selector },
  }) as KubeObject;

describe('a workload selector', () => {
  it('is read from spec.selector; none, or an empty one (which would select everything), is no selector', () => {
    expect(selectorOf(workload({ matchLabels: { app: 'web' } }))).toEqual({ matchLabels: { app: 'web' } });
    expect(selectorOf(workload(undefined))).toBeUndefined();
    expect(selectorOf(workload({}))).toBeUndefined();
    expect(selectorOf(workload({ matchLabels: {}, matchExpressions: [] }))).toBeUndefined();
  });

  it('is written as the query string the API server takes', () => {
    expect(
      selectorString({
        matchLabels: { app: 'web', tier: 'front' },
        matchExpressions: [
          { key: 'track', operator: 'In', values: ['stable', 'canary'] },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
          { key: 'owner', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=web,tier=front,track in (stable,canary),env notin (dev),owner,!legacy');
  });

  it('selects locally exactly the labels the server would', () => {
    const sel = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'track', operator: 'In', values: ['stable', 'canary'] },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    };
    const base = { app: 'web', track: 'stable', owner: 'team-a' };
    expect(selects(sel, base)).toBe(true);
    expect(selects(sel, { ...base, env: 'prod' })).toBe(true);
    expect(selects(sel, { ...base, app: 'web-2' })).toBe(false);
    expect(selects(sel, { ...base, track: 'beta' })).toBe(false);
    expect(selects(sel, { app: 'web', owner: 'x' })).toBe(false); // In needs the key
    expect(selects(sel, { ...base, env: 'dev' })).toBe(false);
    expect(selects(sel, { app: 'web', track: 'stable' })).toBe(false); // Exists
    expect(selects(sel, { ...base, legacy: '' })).toBe(false); // DoesNotExist, even empty
    expect(selects(sel, undefined)).toBe(false);
    expect(selects({ matchLabels: { app: 'web' } }, { app: 'web', other: 'x' })).toBe(true);
  });

  it('selects nothing with an operator the server would refuse', () => {
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, { a: '2' })).toBe(
      false,
    );
  });
});
