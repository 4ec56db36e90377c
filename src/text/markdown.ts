/**
 * Foreign text (a pusher's file name, a diagnostic quoting their YAML, an API server's error) put
 * into Markdown that a forge renders (GitHub, GitLab, Gitea: CommonMark with GFM's extensions), so
 * that it shows as the text it is: never a link, an image, a mention, a heading, emphasis or
 * raw HTML. Bare URLs included: GFM turns `https://…` and `www.…` in prose into links, and no
 * backslash escape reliably stops that, but nothing is a link inside a code span. Pure.
 */
import { printable } from './printable.ts';

/**
 * `text` as one inline code span: shown verbatim, one line (newlines become spaces, so a line of
 * the text cannot start a heading, a list or a table row), its fence longer than any run of
 * backticks inside it. In a GFM table cell, escape `|` as well (the table is split first).
 */
export function markdownCode(text: string): string {
  const flat = printable(text).replace(/\n/g, ' ');
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  // A backtick at an end would join the fence; CommonMark strips one space from each end when both
  // ends have one. Padding with a space on each side covers both, and is all that is stripped.
  const pad = /^`|`$/.test(flat) || /^ .* $/s.test(flat) || flat === '' ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** `text` inside an HTML block (`<details><summary>…`), where Markdown is not parsed: entities. */
export function htmlText(text: string): string {
  return printable(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/\n/g, ' ');
}
