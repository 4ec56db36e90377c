/**
 * What others wrote, made safe to print: control characters, and the invisible format characters
 * that reorder or hide text on a terminal, a chat line or a rendered comment (Trojan Source,
 * CVE-2021-42574), each become "?".
 */
import { describe, expect, it } from 'vitest';
import { printable } from '../../../src/text/printable.ts';

describe('printable', () => {
  it('turns control characters into "?" and keeps the newline', () => {
    expect(printable('a\u001b[2Jb\rc\u0007d\u009be\nf')).toBe('a?[2Jb?c?d?e\nf');
  });

  it('turns bidi embeddings, overrides, isolates and marks into "?"', () => {
    // A tenant's reason that reads "rollback done" on screen but says the opposite in bytes.
    const bidi = [
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200e',
      '\u200f',
      '\u061c',
    ];
    for (const c of bidi) expect({ c, out: printable(`x${c}y`) }).toEqual({ c, out: 'x?y' });
    expect(printable('ok \u202egnirolla\u202c done')).toBe('ok ?gnirolla? done');
  });

  it('turns line and paragraph separators into "?": a line cannot be split where a newline is not', () => {
    expect(printable('a\u2028b\u2029c')).toBe('a?b?c');
  });

  it('turns invisible characters that hide text into "?": zero-width space, word joiner, BOM, tags', () => {
    expect(printable('sh\u200bop')).toBe('sh?op');
    expect(printable('a\u2060b\u2064c\ufeffd')).toBe('a?b?c?d');
    // Unicode tag characters spell ASCII invisibly ("ASCII smuggling").
    expect(printable('hi\u{e0068}\u{e0069}')).toBe('hi??');
  });

  it('keeps ordinary text of every script, emoji joined by ZWJ, and accents', () => {
    const text = 'Grüße, שלום, مرحبا, 你好 👩‍💻 café ñ';
    expect(printable(text)).toBe(text);
  });
});
