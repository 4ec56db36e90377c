/**
 * Text others wrote (a target's status message, an Event, an annotation, a results commit) made
 * safe to print on a terminal: every control character but the newline (escape sequences that
 * recolour, move the cursor, retitle the window or rewrite earlier lines; carriage returns)
 * becomes "?". The one function for every CLI output of foreign strings. Pure.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '?');
}
