/** The checks a fetch passes before its pack is kept and its ref moves (fetch-connectivity.ts). */
import { describe, expect, it } from 'vitest';
import { acceptedShallow, type FetchedObjects, missingObject } from '../../../src/git/fetch-connectivity.ts';

const id = (c: string) => c.repeat(40);
const [C1, C2, T1, T2, B1, OLD, UNKNOWN] = ['1', '2', 'a', 'b', 'c', 'd', 'e'].map(id) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];

/** A pack of commit C2 (tree T2, parent C1) whose tree names blob B1 and the older tree T1. */
const pack: FetchedObjects = {
  oids: new Set([C2, T2, B1]),
  links: {
    named: new Map([
      [T2, C2],
      [B1, T2],
      [T1, T2],
    ]),
    parents: new Map([[C2, [C1]]]),
  },
};
const storeOf = (...oids: string[]) => {
  const held = new Set(oids);
  return async (oid: string) => held.has(oid);
};

describe('what a fetch must have brought', () => {
  it('passes when everything named is in the pack or already here', async () => {
    expect(await missingObject(C2, pack, new Set(), storeOf(C1, T1))).toBeUndefined();
  });

  it('names the first object missing, and what named it', async () => {
    expect(await missingObject(C2, pack, new Set(), storeOf(C1))).toBe(`object ${T1}, named by ${T2}`);
    expect(await missingObject(C2, pack, new Set(), storeOf(T1))).toBe(`commit ${C1}, the parent of ${C2}`);
    expect(await missingObject(OLD, pack, new Set(), storeOf(C1, T1))).toBe(`the wanted commit ${OLD}`);
  });

  it('lets a shallow commit lack its parents', async () => {
    expect(await missingObject(C2, pack, new Set([C2]), storeOf(T1))).toBeUndefined();
  });

  it('passes a wanted commit already here with no pack', async () => {
    const none: FetchedObjects = { oids: new Set(), links: { named: new Map(), parents: new Map() } };
    expect(await missingObject(OLD, none, new Set(), storeOf(OLD))).toBeUndefined();
  });
});

describe("the server's shallow-info", () => {
  const parentsOf = async (oid: string) => (oid === OLD ? [C1] : undefined);

  it('keeps shallow commits that are here, and drops names of nothing', async () => {
    const kept = await acceptedShallow({ shallow: [C2, UNKNOWN], unshallow: [] }, pack, storeOf(), parentsOf);
    expect(kept).toEqual({ shallow: [C2], unshallow: [] });
  });

  it('makes a commit whole again only when its parents came', async () => {
    expect(await acceptedShallow({ shallow: [], unshallow: [OLD] }, pack, storeOf(C1), parentsOf)).toEqual({
      shallow: [],
      unshallow: [OLD],
    });
    expect(
      await acceptedShallow({ shallow: [], unshallow: [OLD, UNKNOWN] }, pack, storeOf(), parentsOf),
    ).toEqual({
      shallow: [],
      unshallow: [],
    });
    // A commit of the pack: its parents are read from the pack's own links.
    expect(await acceptedShallow({ shallow: [], unshallow: [C2] }, pack, storeOf(C1), parentsOf)).toEqual({
      shallow: [],
      unshallow: [C2],
    });
  });
});
