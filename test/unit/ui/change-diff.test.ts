import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { diffOfChange } from '../../../src/ui/change-diff.ts';

const db = (password: string, replicas = 1): KubeObject => ({
  apiVersion: 'db.example.com/v1',
  kind: 'Database',
  metadata: { name: 'orders', namespace: 'shop' },
  spec: { password, replicas },
});
const secret = (token: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'api', namespace: 'shop' },
  data: { token },
});

describe("the web view's diff of a change", () => {
  it('masks the content of a --sops-kinds kind on both sides, the prior state included, and compares no value', () => {
    const shown = diffOfChange(0, 'Apply', 'Database shop/orders', db('prior-pw'), db('set-pw', 2), true);
    expect(shown.diff).toBe('');
    expect(shown.note).toMatch(/values are masked and never compared/);
    const created = diffOfChange(0, 'Create', 'Database shop/orders', undefined, db('set-pw'), true);
    expect(created.diff).toContain('+  password: "***"');
    expect(created.diff).not.toContain('set-pw');
    expect(created.note).toBeUndefined();
    // Another kind is shown as it is.
    expect(diffOfChange(0, 'Apply', 'x', db('a'), db('b'), false).diff).toContain('+  password: b');
  });

  it("shows a Secret's changed and kept values alike", () => {
    const changed = diffOfChange(1, 'Update', 'Secret shop/api', secret('b2xk'), secret('bmV3'), false);
    const kept = diffOfChange(1, 'Update', 'Secret shop/api', secret('b2xk'), secret('b2xk'), false);
    expect(changed).toEqual(kept);
    expect(changed.note).toMatch(/never compared/);
  });
});
