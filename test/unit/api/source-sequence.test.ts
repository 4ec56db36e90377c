/** A Transaction's place in Git order: only a whole number Janus could have handed out orders anything. */
import { describe, expect, it } from 'vitest';
import { MAX_SOURCE_SEQUENCE, sourceSequence } from '../../../src/api/v1alpha1/index.ts';

const at = (value: string) => sourceSequence({ 'tx.janus.io/source-sequence': value });

describe('sourceSequence', () => {
  it('reads the whole numbers Janus writes', () => {
    expect(at('0')).toBe(0);
    expect(at('17')).toBe(17);
    expect(at(String(MAX_SOURCE_SEQUENCE))).toBe(2 ** 40);
  });

  it('ignores what Janus never writes: beyond 2^40, negative, fractional, padded or not a number', () => {
    for (const value of [
      String(MAX_SOURCE_SEQUENCE + 1),
      '9007199254740991',
      '1e3',
      '-1',
      '1.5',
      ' 1',
      '',
      'NaN',
    ])
      expect(at(value), JSON.stringify(value)).toBeUndefined();
    expect(sourceSequence(undefined)).toBeUndefined();
    expect(sourceSequence({})).toBeUndefined();
  });
});
