/**
 * Namespace globs, as a platform team writes them in its settings (notification routes, analysis
 * addresses and timeouts): `*` any run of characters, `?` one; everything else literal; a whole-name
 * match. Mind that `shop*` also matches `shopping`, and `shop-*` does not match `shop`. Pure.
 */
export function globMatches(glob: string, name: string): boolean {
  const pattern = glob
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`).test(name);
}

/** Whether `glob` can match a namespace: a DNS label's characters, and `*` or `?`. */
export function isNamespaceGlob(glob: string): boolean {
  return glob.length > 0 && glob.length <= 63 && /^[a-z0-9*?]([-a-z0-9*?]*[a-z0-9*?])?$/.test(glob);
}
