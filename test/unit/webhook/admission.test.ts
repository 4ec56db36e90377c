import { describe, expect, it } from 'vitest';
import { Admission } from '../../../src/webhook/admission.ts';

describe('Admission: how many webhook requests are served at once', () => {
  const clock = (start = 0) => {
    const c = { t: start, now: () => c.t };
    return c;
  };

  it('admits up to maxInFlight, and frees a place on release (once)', () => {
    const admission = new Admission({ maxInFlight: 2, shedAfterMs: 1_000, now: clock().now });
    const a = admission.admit(() => {});
    const b = admission.admit(() => {});
    expect(admission.admit(() => {})).toBeUndefined();
    a?.release();
    a?.release();
    expect(admission.inFlight).toBe(1);
    expect(admission.admit(() => {})).toBeDefined();
    expect(b).toBeDefined();
  });

  it('lets a newcomer displace the oldest request once that one has had shedAfterMs', () => {
    const c = clock();
    const admission = new Admission({ maxInFlight: 2, shedAfterMs: 1_000, now: c.now });
    const shed: string[] = [];
    admission.admit(() => shed.push('first'));
    c.t = 500;
    admission.admit(() => shed.push('second'));
    c.t = 999;
    expect(admission.admit(() => shed.push('third'))).toBeUndefined(); // nobody old enough
    c.t = 1_000;
    expect(admission.admit(() => shed.push('fourth'))).toBeDefined();
    expect(shed).toEqual(['first']);
    expect(admission.inFlight).toBe(2);
    c.t = 1_500;
    expect(admission.admit(() => shed.push('fifth'))).toBeDefined();
    expect(shed).toEqual(['first', 'second']);
  });
});
