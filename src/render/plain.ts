/**
 * A folder of plain manifests (docs/sources.md): its `*.yaml`, `*.yml` and `*.json` files, in name
 * order, subfolders too with `recurse`, each read with the project's bounded YAML parser (JSON is
 * YAML). No tool runs. The files' bytes together are bounded like a tool's output.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../kube/resources.ts';
import { compareCodeUnits } from '../text/order.ts';
import { parseObjects } from './output.ts';
import { boundedMessage } from './tool-errors.ts';

export type PlainRead =
  | { ok: true; objects: KubeObject[]; bytes: number }
  | {
      ok: false;
      failure: {
        file?: string | undefined;
        line?: number | undefined;
        message: string;
        bound?: 'output' | undefined;
      };
    };

const MANIFEST = /\.(ya?ml|json)$/;

/** The manifest files of a plain folder, in the order they are read. */
export function plainFiles(root: string, folder: string, recurse: boolean): string[] {
  const files: string[] = [];
  const folders = [folder];
  for (let next = folders.shift(); next !== undefined; next = folders.shift()) {
    const entries = readdirSync(join(root, next), { withFileTypes: true }).sort((a, b) =>
      compareCodeUnits(a.name, b.name),
    );
    for (const entry of entries) {
      const path = next === '' ? entry.name : `${next}/${entry.name}`;
      if (entry.isDirectory()) {
        if (recurse) folders.push(path);
        continue;
      }
      if (entry.isFile() && MANIFEST.test(entry.name)) files.push(path);
    }
  }
  return files;
}

export function readPlain(root: string, folder: string, recurse: boolean, maxBytes: number): PlainRead {
  const objects: KubeObject[] = [];
  let bytes = 0;
  for (const path of plainFiles(root, folder, recurse)) {
    const text = readFileSync(join(root, path));
    bytes += text.length;
    if (bytes > maxBytes) {
      return {
        ok: false,
        failure: {
          file: path,
          bound: 'output',
          message: `the manifests are more than ${maxBytes} bytes (at ${path})`,
        },
      };
    }
    const parsed = parseObjects(path, text.toString('utf8'));
    if (!parsed.ok)
      return {
        ok: false,
        failure: { file: path, line: parsed.line, message: boundedMessage(parsed.message) },
      };
    objects.push(...parsed.objects);
  }
  return { ok: true, objects, bytes };
}
