/** The one order of strings where order is a promise: code units, whatever the locale says. */
import { describe, expect, it } from 'vitest';
import { compareCodeUnits } from '../../../src/text/order.ts';

describe('compareCodeUnits', () => {
  it('orders by UTF-16 code unit: upper case before lower case, accents after z', () => {
    const names = ['b', 'é', 'B', 'a', 'z', 'a-1', 'a'];
    expect(names.sort(compareCodeUnits)).toEqual(['B', 'a', 'a', 'a-1', 'b', 'z', 'é']);
    // A locale's collation orders these otherwise (b, B, é, z in English).
    expect(['z', 'é', 'B', 'b'].sort((x, y) => x.localeCompare(y, 'en'))).not.toEqual(
      ['z', 'é', 'B', 'b'].sort(compareCodeUnits),
    );
  });

  it('is a total order: 0 only for equal strings, antisymmetric', () => {
    expect(compareCodeUnits('lease-a', 'lease-a')).toBe(0);
    expect(compareCodeUnits('lease-a', 'lease-b')).toBe(-1);
    expect(compareCodeUnits('lease-b', 'lease-a')).toBe(1);
    expect(compareCodeUnits('', 'a')).toBe(-1);
  });
});
