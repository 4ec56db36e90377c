/**
 * The one order of strings where order is a promise (change files, lock names, ledgers): UTF-16
 * code units, the same on every machine. Never `localeCompare`: it follows the process's locale
 * and ICU version, and its first call maps ~2.5 MiB of ICU's collation data into every process.
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
