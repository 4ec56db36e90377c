/**
 * A CheckoutView over a checkout on disk (checkout.ts wrote it: regular files and folders only,
 * no symbolic links), for the pre-checks. Reads are bounded by what the checkout let in.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckoutView } from './references.ts';

export function diskView(root: string): CheckoutView {
  const full = (path: string) => (path === '' ? root : join(root, path));
  return {
    kind(path) {
      const stat = statSync(full(path), { throwIfNoEntry: false });
      if (stat?.isFile()) return 'file';
      if (stat?.isDirectory()) return 'folder';
      return undefined;
    },
    read(path) {
      try {
        return readFileSync(full(path), 'utf8');
      } catch {
        return undefined;
      }
    },
    list(path) {
      try {
        return readdirSync(full(path)).sort();
      } catch {
        return [];
      }
    },
  };
}
