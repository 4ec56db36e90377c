import { describe, expect, it } from 'vitest';
import { goFloat, parseEncryptedValue, plainMacBytes } from '../../../src/sops/enc-value.ts';

describe("the bytes sops's MAC takes for a value", () => {
  it("formats numbers as Go's strconv.FormatFloat(n, 'f', -1, 64), never with an exponent", () => {
    expect(goFloat(5432)).toBe('5432');
    expect(goFloat(-12.5)).toBe('-12.5');
    expect(goFloat(1e21)).toBe('1000000000000000000000');
    expect(goFloat(1.5e-7)).toBe('0.00000015');
    expect(goFloat(-2.5e22)).toBe('-25000000000000000000000');
    expect(goFloat(Number.POSITIVE_INFINITY)).toBe('+Inf');
  });

  it('writes booleans as Go-titled words and leaves nulls out', () => {
    expect(plainMacBytes(true)?.toString()).toBe('True');
    expect(plainMacBytes(false)?.toString()).toBe('False');
    expect(plainMacBytes(null)).toBeUndefined();
  });
});

describe('parseEncryptedValue', () => {
  it('says why a string is not a value sops wrote', () => {
    expect(parseEncryptedValue('hunter2')).toMatch(/is not a sops value/);
    expect(parseEncryptedValue('ENC[AES256_GCM,data:AA==,iv:AA==,tag:AA==,type:str]')).toMatch(/1-byte tag/);
    expect(
      parseEncryptedValue('ENC[AES256_GCM,data:AA==,iv:AA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:time]'),
    ).toMatch(/type "time"/);
  });
});
