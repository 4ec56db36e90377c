import { describe, expect, it } from 'vitest';
import {
  ledgerKey,
  mergeLedgers,
  parseLedger,
  prunedLedger,
  renderLedger,
} from '../../../src/notify/ledger.ts';

const T = Date.parse('2026-01-01T00:00:00Z');

describe('delivery ledger', () => {
  it('renders and parses back the same entries', () => {
    const ledger = new Map([
      [ledgerKey('audit', 'uid-1/Committed'), T],
      [ledgerKey('slack', 'shop/web@abc/Rejected'), T + 1000],
    ]);
    expect(parseLedger(renderLedger(ledger))).toEqual(ledger);
  });

  it('reads nothing from what does not parse, and skips entries without a time', () => {
    expect(parseLedger(undefined).size).toBe(0);
    expect(parseLedger('not json').size).toBe(0);
    expect(parseLedger('[1]').size).toBe(0);
    expect([...parseLedger('{"a\\nx":"nope","b\\ny":"2026-01-01T00:00:00.000Z"}').keys()]).toEqual(['b\ny']);
  });

  it('prunes what is older than the window, then the oldest past the bound', () => {
    const ledger = new Map([
      ['old', T - 11 * 60_000],
      ['a', T - 3000],
      ['b', T - 2000],
      ['c', T - 1000],
    ]);
    expect([...prunedLedger(ledger, T, 10 * 60_000).keys()].sort()).toEqual(['a', 'b', 'c']);
    expect([...prunedLedger(ledger, T, 10 * 60_000, 2).keys()].sort()).toEqual(['b', 'c']);
  });

  it('merges two ledgers, keeping the later time of an entry both have', () => {
    const merged = mergeLedgers(
      new Map([
        ['a', 1],
        ['b', 5],
      ]),
      new Map([
        ['b', 3],
        ['c', 2],
      ]),
    );
    expect(merged).toEqual(
      new Map([
        ['a', 1],
        ['b', 5],
        ['c', 2],
      ]),
    );
  });
});
