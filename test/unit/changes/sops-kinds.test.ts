/**
 * Issue 34, round 4, item 11: SOPS content is applied, decrypted, only to Secrets and the kinds a
 * platform team allows (--sops-kinds), never to a kind the built-in view role reads; and the
 * controller refuses a kind the live, aggregated ClusterRole view reads, before decrypting.
 */
import { describe, expect, it } from 'vitest';
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import { parseSopsKinds, SopsKindsError, sopsKindRefusal } from '../../../src/changes/sops-kinds.ts';
import type { Item } from '../../../src/controller/context.ts';
import { sopsRefusal, type ViewRoleRead } from '../../../src/controller/view-role.ts';
import { type PolicyRule, rulesMayRead } from '../../../src/rollback-store/view-readable.ts';

describe('parseSopsKinds', () => {
  it('reads Kind and Kind.group entries as group/Kind keys, trimmed and without repeats', () => {
    expect(parseSopsKinds(undefined)).toEqual([]);
    expect(parseSopsKinds(' ,')).toEqual([]);
    expect(parseSopsKinds('Database.db.example.com, Secret ,Database.db.example.com')).toEqual([
      'db.example.com/Database',
      '/Secret',
    ]);
  });

  it('refuses a kind the built-in view role reads, and what is not a kind', () => {
    for (const entry of ['ConfigMap', 'Deployment.apps', 'Ingress.networking.k8s.io']) {
      expect(() => parseSopsKinds(entry), entry).toThrow(/built-in view role.*never allowed/);
    }
    for (const entry of ['*', 'database.db.example.com', 'Database.DB', 'Data base', 'Kind.-bad']) {
      expect(() => parseSopsKinds(entry), entry).toThrow(SopsKindsError);
    }
  });
});

describe('sopsKindRefusal', () => {
  it('allows a Secret always, another kind only when listed', () => {
    expect(sopsKindRefusal('v1', 'Secret', [])).toBeUndefined();
    expect(sopsKindRefusal('db.example.com/v1', 'Database', ['db.example.com/Database'])).toBeUndefined();
    expect(sopsKindRefusal('db.example.com/v1', 'Database', [])).toContain(
      '(--sops-kinds, JANUS_SOPS_KINDS: no other kind), not to a Database.db.example.com',
    );
    expect(sopsKindRefusal('v1', 'ConfigMap', ['db.example.com/Database'])).toContain(
      'JANUS_SOPS_KINDS: Database.db.example.com), not to a ConfigMap',
    );
    // Another group's kind of the same name is another kind.
    expect(sopsKindRefusal('other.example.com/v1', 'Database', ['db.example.com/Database'])).toBeDefined();
  });
});

describe('rulesMayRead: what a ClusterRole lets read, as RBAC matches', () => {
  const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({
    apiGroups,
    resources,
    verbs,
  });
  it('matches group, resource and a read verb, with * for any', () => {
    const rules = [rule(['db.example.com'], ['databases'], ['get', 'list', 'watch'])];
    expect(rulesMayRead(rules, 'db.example.com', 'databases')).toBe(true);
    expect(rulesMayRead(rules, 'db.example.com', 'backups')).toBe(false);
    expect(rulesMayRead(rules, 'other.example.com', 'databases')).toBe(false);
    expect(rulesMayRead([rule(['*'], ['*'], ['*'])], '', 'secrets')).toBe(true);
    expect(rulesMayRead([rule([''], ['secrets'], ['create', 'update'])], '', 'secrets')).toBe(false);
    // A subresource is not the resource.
    expect(rulesMayRead([rule([''], ['pods/log'], ['get'])], '', 'pods')).toBe(false);
    expect(
      rulesMayRead([{ nonResourceURLs: ['/healthz'], verbs: ['get'] } as PolicyRule], '', 'secrets'),
    ).toBe(false);
  });
});

describe('sopsRefusal: before anything is decrypted', () => {
  const item = (index: number, apiVersion: string, kind: string, sops = true): Item =>
    ({
      index,
      change: {
        target: { apiVersion, kind, name: 'x' },
        type: 'Create',
        ...(sops && { sopsContent: 'e' }),
      } as Change,
      target: { apiVersion, kind, name: 'x', namespace: 'shop' },
      lock: { namespace: 'shop', name: 'l' },
    }) as Item;
  const role = (read: ViewRoleRead) => ({ read: async () => read });
  const resourceOf = async (_apiVersion: string, kind: string) => `${kind.toLowerCase()}s`;
  const VIEW_WITH_VAULTS = role({
    rules: [{ apiGroups: ['vault.example.com'], resources: ['vaults'], verbs: ['get', 'list', 'watch'] }],
  });
  const allowed = ['vault.example.com/Vault', 'locker.example.com/Locker'];

  it('applies a Secret and an allowed kind view does not read; ignores changes in clear', async () => {
    const items = [
      item(0, 'v1', 'Secret'),
      item(1, 'locker.example.com/v1', 'Locker'),
      item(2, 'v1', 'ConfigMap', false),
    ];
    expect(await sopsRefusal(items, allowed, VIEW_WITH_VAULTS, resourceOf)).toBeUndefined();
  });

  it('refuses a kind not allowed, and an allowed one the live view role reads, naming the change', async () => {
    expect(await sopsRefusal([item(0, 'v1', 'ConfigMap')], allowed, VIEW_WITH_VAULTS, resourceOf)).toMatch(
      /^change 0: SOPS-encrypted content is applied only to Secrets/,
    );
    expect(
      await sopsRefusal(
        [item(0, 'v1', 'Secret'), item(1, 'vault.example.com/v1', 'Vault')],
        allowed,
        VIEW_WITH_VAULTS,
        resourceOf,
      ),
    ).toMatch(/^change 1: ClusterRole view reads vaults of vault\.example\.com/);
  });

  it('refuses even a Secret when a cluster aggregates Secrets into view', async () => {
    const leaky = role({ rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
    expect(await sopsRefusal([item(0, 'v1', 'Secret')], [], leaky, resourceOf)).toMatch(
      /^change 0: ClusterRole view reads secrets/,
    );
  });

  it('when the role cannot be read, applies Secrets only', async () => {
    const unreadable = role({ unreadable: 'GET …/clusterroles/view: 403 Forbidden' });
    expect(await sopsRefusal([item(0, 'v1', 'Secret')], allowed, unreadable, resourceOf)).toBeUndefined();
    expect(
      await sopsRefusal([item(0, 'locker.example.com/v1', 'Locker')], allowed, unreadable, resourceOf),
    ).toContain('could not read ClusterRole view');
  });
});
