/** `text` as a regular expression that matches it literally (RegExp.escape, before es2025's lib). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
