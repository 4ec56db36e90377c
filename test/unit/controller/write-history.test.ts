import { describe, expect, it } from 'vitest';
import { WriteHistory } from '../../../src/controller/write-history.ts';

const KEY = 'shop/deploy-v2';

describe('WriteHistory: the stale-read rule', () => {
  it('knows nothing at first: no version is stale', () => {
    const history = new WriteHistory();
    expect(history.isStale(KEY, '1')).toBe(false);
    expect(history.isStale(KEY, undefined)).toBe(false);
  });

  it('a version we reconciled from is stale once we write a later one', () => {
    const history = new WriteHistory();
    history.read(KEY, '10');
    expect(history.isStale(KEY, '10')).toBe(false);
    history.wrote(KEY, '11');
    expect(history.isStale(KEY, '10')).toBe(true);
  });

  it('a version we wrote is stale once we write a later one; the latest write is not', () => {
    const history = new WriteHistory();
    history.wrote(KEY, '11');
    history.wrote(KEY, '12');
    history.wrote(KEY, '13');
    expect(history.isStale(KEY, '11')).toBe(true);
    expect(history.isStale(KEY, '12')).toBe(true);
    expect(history.isStale(KEY, '13')).toBe(false);
  });

  it('the latest write stays fresh however often the informer delivers it', () => {
    const history = new WriteHistory();
    history.wrote(KEY, '11');
    for (let i = 0; i < 3; i++) {
      expect(history.isStale(KEY, '11')).toBe(false);
      history.read(KEY, '11');
    }
    expect(history.isStale(KEY, '11')).toBe(false);
  });

  it('a no-op write that returns the version we read leaves it fresh', () => {
    const history = new WriteHistory();
    history.read(KEY, '10');
    history.wrote(KEY, '10');
    expect(history.isStale(KEY, '10')).toBe(false);
    history.read(KEY, '10');
    expect(history.isStale(KEY, '10')).toBe(false);
  });

  it('a version we never saw is not stale: someone else wrote it', () => {
    const history = new WriteHistory();
    history.read(KEY, '10');
    history.wrote(KEY, '11');
    expect(history.isStale(KEY, '12')).toBe(false);
    expect(history.isStale(KEY, '9')).toBe(false);
  });

  it('a version someone else wrote after our latest write stays fresh until we write again', () => {
    // We wrote 11 and are waiting (for a lock, the deadline, a recovery); a user then annotates the
    // Transaction (12). A requeue that finds 12 unchanged in the cache must still reconcile it.
    const history = new WriteHistory();
    history.wrote(KEY, '11');
    expect(history.isStale(KEY, '12')).toBe(false);
    history.read(KEY, '12');
    expect(history.isStale(KEY, '12')).toBe(false);
    history.wrote(KEY, '13');
    expect(history.isStale(KEY, '12')).toBe(true);
  });

  it('compares versions by identity, never by order', () => {
    const history = new WriteHistory();
    history.wrote(KEY, '900');
    history.wrote(KEY, '1000');
    expect(history.isStale(KEY, '900')).toBe(true);
    expect(history.isStale(KEY, '950')).toBe(false);
  });

  it('keeps Transactions apart', () => {
    const history = new WriteHistory();
    history.wrote('shop/a', '5');
    history.wrote('shop/a', '6');
    expect(history.isStale('shop/a', '5')).toBe(true);
    expect(history.isStale('shop/b', '5')).toBe(false);
  });

  it('ignores missing versions', () => {
    const history = new WriteHistory();
    history.read(KEY, undefined);
    history.wrote(KEY, undefined);
    history.wrote(KEY, '');
    expect(history.isStale(KEY, '')).toBe(false);
    history.wrote(KEY, '3');
    history.wrote(KEY, undefined);
    expect(history.isStale(KEY, '3')).toBe(false);
  });

  it('forget() drops everything known about a Transaction (e.g. deleted and re-created)', () => {
    const history = new WriteHistory();
    history.wrote(KEY, '11');
    history.wrote(KEY, '12');
    history.forget(KEY);
    expect(history.isStale(KEY, '11')).toBe(false);
    history.wrote(KEY, '20');
    expect(history.isStale(KEY, '11')).toBe(false);
    expect(history.isStale(KEY, '20')).toBe(false);
  });

  it('remembers at least the last 64 superseded versions, and stays bounded beyond', () => {
    const history = new WriteHistory();
    for (let rv = 1; rv <= 1000; rv++) history.wrote(KEY, String(rv));
    for (let rv = 1000 - 64; rv < 1000; rv++) expect(history.isStale(KEY, String(rv)), String(rv)).toBe(true);
    expect(history.isStale(KEY, '1')).toBe(false);
    expect(history.isStale(KEY, '1000')).toBe(false);
  });
});
