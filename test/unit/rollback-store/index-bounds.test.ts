import { describe, expect, it } from 'vitest';
import { MAX_CHANGES } from '../../../src/api/v1alpha1/index.ts';
import {
  decodeIndex,
  encodeStore,
  INDEX_KEY,
  MAX_PARTS_PER_SNAPSHOT,
  MAX_STORE_OBJECTS,
} from '../../../src/rollback-store/codec.ts';

const cm = (name: string, value: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'shop' },
  data: { v: value },
});

const indexOf = (index: unknown) => ({ [INDEX_KEY]: JSON.stringify(index) });

describe("a rollback store's index is refused before anything it names is read", () => {
  it('accepts what encodeStore writes, for the largest transaction', () => {
    const snapshots = Array.from({ length: MAX_CHANGES }, (_, i) => ({
      index: i,
      prior: cm(`c${i}`, 'x'.repeat(i)),
    }));
    const store = encodeStore(snapshots, 'shop');
    expect(Object.keys(decodeIndex(store.configMaps[0]).items)).toHaveLength(MAX_CHANGES);
    // A snapshot split in parts: 3 MiB of escaped quotes in one ConfigMap value.
    const big = encodeStore([{ index: 0, prior: cm('big', '"'.repeat(1536 * 1024)) }], 'shop');
    const parts = decodeIndex(big.configMaps[0]).items['0']?.parts ?? [];
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.length).toBeLessThanOrEqual(MAX_PARTS_PER_SNAPSHOT);
  });

  it('refuses an index naming a million parts', () => {
    const parts = Array.from({ length: 1_000_000 }, (_, i) => i % 3);
    expect(() =>
      decodeIndex(
        indexOf({ version: 1, configMaps: 3, secrets: 0, items: { '0': { kind: 'ConfigMap', parts } } }),
      ),
    ).toThrow(
      /^the rollback store's index.json is not valid: it is \d+ bytes; an index takes at most 65536$/,
    );
  });

  it.each([
    [
      {
        version: 1,
        configMaps: 1,
        secrets: 0,
        items: { '0': { kind: 'ConfigMap', parts: Array(17).fill(0) } },
      },
      'snapshot 0 names 17 parts; a snapshot has 1 to 16',
    ],
    [
      { version: 1, configMaps: MAX_STORE_OBJECTS + 1, secrets: 0, items: {} },
      `configMaps must be a count of at most ${MAX_STORE_OBJECTS} objects`,
    ],
    [
      { version: 1, configMaps: 1, secrets: 0, items: { '0': { kind: 'Secret', parts: [0] } } },
      "snapshot 0 names a Secret beyond the store's 0",
    ],
    [
      {
        version: 1,
        configMaps: 1,
        secrets: 0,
        items: { [String(MAX_CHANGES)]: { kind: 'ConfigMap', parts: [0] } },
      },
      `snapshot "${MAX_CHANGES}" is not a change index`,
    ],
    [
      {
        version: 1,
        configMaps: 1,
        secrets: 0,
        items: Object.fromEntries(
          Array.from({ length: MAX_CHANGES + 1 }, (_, i) => [String(i), { kind: 'ConfigMap', parts: [0] }]),
        ),
      },
      `it must name at most ${MAX_CHANGES} snapshots, one per change`,
    ],
    [{ version: 2 }, 'it is not a version 1 index'],
  ])('refuses %j', (index, problem) => {
    expect(() => decodeIndex(indexOf(index))).toThrow(
      `the rollback store's index.json is not valid: ${problem}`,
    );
  });
});
