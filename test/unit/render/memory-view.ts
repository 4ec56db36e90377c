/** A CheckoutView over files in memory, for the pre-checks' unit tests. */
import type { CheckoutView } from '../../../src/render/references.ts';

export function memoryView(files: Readonly<Record<string, string>>): CheckoutView {
  const folders = new Set<string>(['']);
  for (const path of Object.keys(files)) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  return {
    kind: (path) => (path in files ? 'file' : folders.has(path) ? 'folder' : undefined),
    read: (path) => files[path],
    list: (path) => {
      const prefix = path === '' ? '' : `${path}/`;
      const names = new Set<string>();
      for (const p of [...Object.keys(files), ...folders]) {
        if (p !== path && p.startsWith(prefix)) names.add(p.slice(prefix.length).split('/')[0] as string);
      }
      return [...names].sort();
    },
  };
}
