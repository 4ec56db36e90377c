/**
 * A folder of plain manifests (docs/sources.md): its `*.yaml`, `*.yml` and `*.json` files, in name
 * order, subfolders too with `recurse`, each read with the project's bounded YAML parser (JSON is
 * YAML). No tool runs. The files' bytes together are bounded like a tool's output, before any is
 * parsed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compareCodeUnits } from '../text/order.ts';
import type { OutputText } from './output-thread.ts';

export type PlainRead =
  | { ok: true; texts: OutputText[]; bytes: number }
  | { ok: false; failure: { file?: string | undefined; message: string; bound?: 'output' | undefined } };

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

/** The first of `files` at which their sizes together pass `maxBytes`: checked before they are read. */
export function plainSizeProblem(
  root: string,
  files: readonly string[],
  maxBytes: number,
): { file: string; bound: 'output'; message: string } | undefined {
  let bytes = 0;
  for (const path of files) {
    bytes += statSync(join(root, path)).size;
    if (bytes > maxBytes) return tooLarge(path, maxBytes);
  }
  return undefined;
}

/**
 * The texts of a plain folder's manifest files, bounded together by `maxBytes` BEFORE any is
 * parsed (output-thread.ts reads them as objects): the bound is checked on sizes, not on text
 * read, so a folder of many large files is refused without holding them.
 */
export function readPlain(root: string, folder: string, recurse: boolean, maxBytes: number): PlainRead {
  const files = plainFiles(root, folder, recurse);
  const problem = plainSizeProblem(root, files, maxBytes);
  if (problem) return { ok: false, failure: problem };
  const texts: OutputText[] = [];
  let read = 0;
  for (const path of files) {
    const text = readFileSync(join(root, path));
    // Decrypted in place since the sizes were taken: bounded again as they are now.
    read += text.length;
    if (read > maxBytes) return { ok: false, failure: tooLarge(path, maxBytes) };
    texts.push({ what: path, text: text.toString('utf8') });
  }
  return { ok: true, texts, bytes: read };
}

function tooLarge(path: string, maxBytes: number): { file: string; bound: 'output'; message: string } {
  return {
    file: path,
    bound: 'output',
    message: `the manifests are more than ${maxBytes} bytes (at ${path})`,
  };
}
