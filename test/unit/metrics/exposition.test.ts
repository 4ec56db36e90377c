import { describe, expect, it } from 'vitest';
import { parseExposition } from './exposition.ts';
import { bucketCount, histogramOf, labelNamesOf, sampleValue } from './query.ts';

// The parser is what every metrics test trusts, so it gets tests of its own.
describe('parseExposition', () => {
  it('reads families, help, labels with escapes, and special values', () => {
    const text = [
      '# HELP x_total Things, with a \\\\ and a\\nnewline.',
      '# TYPE x_total counter',
      'x_total{a="1",b="q\\"uote, comma } brace"} 3',
      'x_total{a="2"} +Inf 1700000000000',
      'x_total{a="4"} Nan',
      '# a free comment',
      '',
    ].join('\n');

    const exposition = parseExposition(text);

    const x = exposition.get('x_total');
    expect(x?.type).toBe('counter');
    expect(x?.help).toBe('Things, with a \\ and a\nnewline.');
    expect(labelNamesOf(x!)).toEqual(['a', 'b']);
    expect(sampleValue(exposition, 'x_total', { a: '1', b: 'q"uote, comma } brace' })).toBe(3);
    expect(sampleValue(exposition, 'x_total', { a: '2' })).toBe(Number.POSITIVE_INFINITY);
    expect(sampleValue(exposition, 'x_total', { a: '4' })).toBeNaN();
    expect(sampleValue(exposition, 'x_total', { a: '3' })).toBeUndefined();
  });

  it.each([
    ['a sample with no TYPE', 'y 1'],
    ['a second TYPE for one family', '# TYPE y gauge\n# TYPE y gauge'],
    ['an unknown type', '# TYPE y meter'],
    ['a value that is not a number', '# TYPE y gauge\ny one'],
    ['a sample without a value', '# TYPE y gauge\ny'],
    ['an unterminated label value', '# TYPE y gauge\ny{a="1} 1'],
    ['a repeated series', '# TYPE y gauge\ny{a="1"} 1\ny{a="1"} 2'],
    ['a histogram sample under a gauge', '# TYPE y gauge\ny_bucket{le="1"} 1'],
  ])('refuses %s', (_, text) => {
    expect(() => parseExposition(text)).toThrow();
  });
});

describe('histogramOf', () => {
  const histogram = (plusInf: number) =>
    parseExposition(
      [
        '# TYPE h histogram',
        'h_bucket{le="1",k="v"} 1',
        'h_bucket{le="5",k="v"} 3',
        `h_bucket{le="+Inf",k="v"} ${plusInf}`,
        'h_sum{k="v"} 9.5',
        'h_count{k="v"} 4',
      ].join('\n'),
    );

  it('returns the buckets, sum and count of one series', () => {
    const series = histogramOf(histogram(4), 'h', { k: 'v' });

    expect(series.count).toBe(4);
    expect(series.sum).toBe(9.5);
    expect(bucketCount(series, 5)).toBe(3);
  });

  it('refuses a +Inf bucket that differs from the count', () => {
    expect(() => histogramOf(histogram(3), 'h', { k: 'v' })).toThrow(/\+Inf/);
  });
});
