/**
 * Indexing packs a hostile server or a crafted push could send (src/git/pack-indexer.ts): each
 * object built once whatever the fan-out, the event loop given back while it works, and what a
 * pack may cost in memory and CPU bounded before it is spent. Byte-for-byte agreement with git's
 * own index-pack is test/local/git/pack-indexer.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type IndexLimits, indexPack } from '../../../src/git/pack-indexer.ts';
import {
  appendDelta,
  type CraftedEntry,
  craftDelta,
  craftPack,
  objectId,
} from '../../support/git/crafted-pack.ts';

const MiB = 1024 * 1024;
const LIMITS: IndexLimits = {
  maxObjects: 1000,
  maxObjectBytes: 64 * MiB,
  maxDeltaBytes: 8 * MiB,
  maxHeldBytes: 16 * MiB,
  maxInflatedBytes: 1024 * MiB,
};

/** The object ids an index lists, in its (sorted) order. */
function indexedIds(idx: Buffer): string[] {
  const count = idx.readUInt32BE(8 + 255 * 4);
  return Array.from({ length: count }, (_, i) => idx.toString('hex', 1032 + i * 20, 1052 + i * 20));
}

describe('indexing a crafted pack', () => {
  it('names every object of a base with many deltas on it, by offset and by id, in any order', async () => {
    const base = Buffer.alloc(3 * MiB, 'a');
    const baseId = objectId('blob', base);
    const entries: CraftedEntry[] = [
      // A delta by id on a base that comes later, and one on that delta.
      { ref: baseId, delta: appendDelta(base.length, 'before') },
      { type: 'blob', content: base },
      ...Array.from({ length: 40 }, (_, i) => ({ ofs: 1, delta: appendDelta(base.length, `+${i}`) })),
      {
        ref: objectId('blob', Buffer.concat([base, Buffer.from('+3')])),
        delta: appendDelta(base.length + 2, '!'),
      },
    ];
    const expected = [
      objectId('blob', Buffer.concat([base, Buffer.from('before')])),
      baseId,
      ...Array.from({ length: 40 }, (_, i) => objectId('blob', Buffer.concat([base, Buffer.from(`+${i}`)]))),
      objectId('blob', Buffer.concat([base, Buffer.from('+3!')])),
    ];
    const indexed = await indexPack(craftPack(entries), LIMITS);
    expect(indexedIds(indexed.idx)).toEqual([...expected].sort());
  });

  it('gives the event loop back while it resolves', async () => {
    const base = Buffer.alloc(2 * MiB, 'b');
    const pack = craftPack([
      { type: 'blob', content: base },
      ...Array.from({ length: 100 }, (_, i) => ({ ofs: 0, delta: appendDelta(base.length, `${i}`) })),
    ]);
    // No object is over 4 MiB, so nothing of it is asynchronous but the turns it gives back.
    let turns = 0;
    let indexing = true;
    const tick = () => {
      turns++;
      if (indexing) setImmediate(tick);
    };
    setImmediate(tick);
    await indexPack(pack, LIMITS);
    indexing = false;
    expect(turns).toBeGreaterThan(1);
  });

  it('refuses a pack of more objects than its limit, from its header', async () => {
    const pack = craftPack(
      Array.from({ length: 3 }, (_, i) => ({ type: 'blob' as const, content: Buffer.from(`${i}`) })),
    );
    await expect(indexPack(pack, { ...LIMITS, maxObjects: 2 })).rejects.toThrow(
      'the fetched pack holds 3 objects; Janus indexes packs of at most 2',
    );
    await expect(indexPack(pack, { ...LIMITS, maxObjects: 3 })).resolves.toMatchObject({ objects: 3 });
  });

  it('refuses a pack that would inflate to more than its budget, before building it', async () => {
    const base = Buffer.alloc(MiB, 'c');
    const pack = craftPack([
      { type: 'blob', content: base },
      ...Array.from({ length: 20 }, (_, i) => ({ ofs: 0, delta: appendDelta(base.length, `${i}`) })),
    ]);
    await expect(indexPack(pack, { ...LIMITS, maxInflatedBytes: 10 * MiB })).rejects.toThrow(
      /the fetched pack inflates to more than 10485760 bytes \(at offset \d+\); Janus indexes packs of at most that/,
    );
    await expect(indexPack(pack, { ...LIMITS, maxInflatedBytes: 25 * MiB })).resolves.toMatchObject({
      objects: 21,
    });
  });

  it('refuses a delta whose result, base or own size is over the delta limit', async () => {
    const small = Buffer.alloc(1024, 'd');
    // A result size claimed in the delta's header (16 MiB): refused before anything is built.
    const claim = Buffer.from(appendDelta(small.length, ''));
    claim.set([0x80, 0x08, 0x80, 0x80, 0x80, 0x08], 0);
    await expect(
      indexPack(
        craftPack([
          { type: 'blob', content: small },
          { ofs: 0, delta: claim },
        ]),
        LIMITS,
      ),
    ).rejects.toThrow(
      /a delta whose result is 16777216 bytes \(at offset \d+\); Janus resolves deltas of at most 8388608 bytes/,
    );
    const onSmall = craftPack([
      { type: 'blob', content: small },
      { ofs: 0, delta: appendDelta(small.length, '') },
    ]);
    // Ten bytes taken from a base over the limit: the base would have to be held whole.
    const onLarge = craftPack([
      { type: 'blob', content: small },
      { ofs: 0, delta: craftDelta(small.length, 10, [{ copy: 0, size: 10 }]) },
    ]);
    await expect(indexPack(onLarge, { ...LIMITS, maxDeltaBytes: 1000 })).rejects.toThrow(
      /a delta on a base of 1024 bytes/,
    );
    await expect(indexPack(onSmall, { ...LIMITS, maxDeltaBytes: 4 })).rejects.toThrow(/a delta of \d+ bytes/);
  });

  it('refuses a tree of deltas that would hold more bases at once than its limit', async () => {
    // Every level has two deltas, so each level's base is held while the first is followed down.
    const size = 2 * MiB;
    const entries: CraftedEntry[] = [{ type: 'blob', content: Buffer.alloc(size, 'e') }];
    for (let level = 0, parent = 0; level < 12; level++) {
      entries.push({ ofs: parent, delta: appendDelta(size + level, 'x') });
      entries.push({ ofs: parent, delta: appendDelta(size + level, 'y') });
      parent = entries.length - 2;
    }
    await expect(indexPack(craftPack(entries), LIMITS)).rejects.toThrow(
      /resolving the fetched pack's deltas would hold more than 16777216 bytes of bases/,
    );
    await expect(indexPack(craftPack(entries), { ...LIMITS, maxHeldBytes: 64 * MiB })).resolves.toMatchObject(
      {
        objects: 25,
      },
    );
  });

  it("lists what the pack's trees and commits name, but a submodule's commit", async () => {
    const blob = Buffer.from('kind: ConfigMap\n');
    const blobId = objectId('blob', blob);
    const submodule = 'f'.repeat(40);
    const tree = Buffer.concat([
      Buffer.from('100644 a.yaml\0'),
      Buffer.from(blobId, 'hex'),
      Buffer.from('160000 vendor\0'),
      Buffer.from(submodule, 'hex'),
    ]);
    const treeId = objectId('tree', tree);
    const parent = '1'.repeat(40);
    const commit = Buffer.from(
      `tree ${treeId}\nparent ${parent}\nauthor a <a@b> 0 +0000\n\nparent ${'2'.repeat(40)}\n`,
    );
    const commitId = objectId('commit', commit);
    const indexed = await indexPack(
      craftPack([
        { type: 'commit', content: commit },
        { type: 'tree', content: tree },
        { type: 'blob', content: blob },
      ]),
      LIMITS,
    );
    expect([...indexed.oids].sort()).toEqual([commitId, treeId, blobId].sort());
    expect(indexed.links.named).toEqual(
      new Map([
        [treeId, commitId],
        [blobId, treeId],
      ]),
    );
    expect(indexed.links.parents).toEqual(new Map([[commitId, [parent]]]));
  });

  it('refuses a delta of more instructions than its result can need, and counts each one', async () => {
    // One-byte copies: a few bytes of pack, each costing the time of a copy call.
    const many = (n: number) =>
      craftDelta(
        1,
        n,
        Array.from({ length: n }, () => ({ copy: 0, size: 1 })),
      );
    const base: CraftedEntry = { type: 'blob', content: Buffer.from('z') };
    await expect(indexPack(craftPack([base, { ofs: 0, delta: many(5000) }]), LIMITS)).rejects.toThrow(
      /the delta at offset \d+ holds 5000 instructions for a result of 5000 bytes/,
    );
    // Within the per-delta bound, but 256 bytes of the budget each.
    const within = craftPack([base, { ofs: 0, delta: many(1024) }]);
    await expect(indexPack(within, { ...LIMITS, maxInflatedBytes: 200 * 1024 })).rejects.toThrow(
      /inflates to more than 204800 bytes/,
    );
    await expect(indexPack(within, { ...LIMITS, maxInflatedBytes: 300 * 1024 })).resolves.toMatchObject({
      objects: 2,
    });
  });

  it('reads the tree and parents of a commit too large to hold from its start', async () => {
    const tree = 'a'.repeat(40);
    const parent = 'b'.repeat(40);
    const message = 'x'.repeat(5 * MiB);
    const commit = Buffer.from(
      `tree ${tree}\nparent ${parent}\nparent ${parent}\nauthor a <a@b> 0 +0000\n\n${message}`,
    );
    const indexed = await indexPack(craftPack([{ type: 'commit', content: commit }]), LIMITS);
    const id = objectId('commit', commit);
    expect(indexed.links.named).toEqual(new Map([[tree, id]]));
    expect(indexed.links.parents).toEqual(new Map([[id, [parent]]]));
  });

  it('refuses a pack whose trees name more objects than it may hold', async () => {
    const tree = Buffer.concat(
      Array.from({ length: 20 }, (_, i) => [Buffer.from(`100644 f${i}\0`), Buffer.alloc(20, i + 1)]).flat(),
    );
    await expect(
      indexPack(craftPack([{ type: 'tree', content: tree }]), { ...LIMITS, maxObjects: 10 }),
    ).rejects.toThrow("the fetched pack's trees and commits name more than 10 objects");
  });

  it('refuses ref-deltas on each other, naming a base that is not in the pack', async () => {
    const a = 'a'.repeat(40);
    const pack = craftPack([
      { type: 'blob', content: Buffer.from('x') },
      { ref: a, delta: appendDelta(1, 'y') },
    ]);
    await expect(indexPack(pack, LIMITS)).rejects.toThrow(`the base ${a} of the delta at offset`);
  });
});
