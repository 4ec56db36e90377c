/**
 * Text others wrote (a target's status message, an Event, an annotation, a results commit, a
 * pusher's file name) made safe to show: every control character but the newline (escape
 * sequences that recolour, move the cursor, retitle the window or rewrite earlier lines; carriage
 * returns) becomes "?", and so does every invisible character that reorders or hides text where
 * it is shown (a terminal, a chat message, a rendered comment):
 * - bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and marks
 *   (U+200E, U+200F, U+061C), which make text read otherwise than its bytes (Trojan Source,
 *   CVE-2021-42574);
 * - the line and paragraph separators U+2028 and U+2029, line breaks that are not newlines;
 * - zero-width characters that hide text or tell look-alike names apart: U+200B, U+2060–U+2064,
 *   U+FEFF, U+180E, and the tag characters U+E0000–U+E007F, which spell ASCII invisibly.
 * The joiners U+200C and U+200D are kept: scripts and emoji need them; tabs with `keepTabs` (a
 * diff of YAML that holds one). The one function for every output of foreign strings. Pure.
 */
export function printable(text: string, options: { keepTabs?: boolean } = {}): string {
  return text.replace(UNPRINTABLE, (c) => (c === '\t' && options.keepTabs ? c : '?'));
}

const UNPRINTABLE = new RegExp(
  [
    '[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f]', // controls, but the newline
    '[\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]', // bidi
    '[\\u2028\\u2029]', // separators
    '[\\u180e\\u200b\\u2060-\\u2064\\ufeff]|[\\u{e0000}-\\u{e007f}]', // invisible
  ].join('|'),
  'gu',
);
