/**
 * Paths of the checkout, decided lexically (pure): where a reference written in a file lands, and
 * whether it leaves the checkout. Every path here is relative to the checkout's root, with `/`
 * separators and no leading slash; the root itself is ''.
 */
import { posix } from 'node:path';

/**
 * Where `reference`, written in a file of folder `base`, lands: the normalized path from the
 * checkout's root, or undefined when it is absolute or climbs out of the checkout.
 */
export function resolveWithin(base: string, reference: string): string | undefined {
  if (reference.startsWith('/') || reference.includes('\0')) return undefined;
  const joined = posix.normalize(posix.join(base === '' ? '.' : base, reference));
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) return undefined;
  return joined === '.' ? '' : joined.replace(/\/$/, '');
}

/** The folder holding `path` ('' for a file at the root). */
export function folderOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/** A name one tree entry may have: no separator, not `.` or `..`, not empty, no NUL. */
export function safeEntryName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * A request's path, checked: relative, no `..`, no empty or `.` segments beyond a trailing
 * slash. Returns it without leading or trailing slashes, or undefined when it is not one.
 */
export function sourcePath(path: string): string | undefined {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '.') return '';
  if (trimmed.startsWith('/')) return undefined;
  const segments = trimmed.split('/');
  return segments.every(safeEntryName) ? segments.join('/') : undefined;
}
