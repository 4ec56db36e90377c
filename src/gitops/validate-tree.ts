/**
 * Offline validation for `janus validate [dir]` in pull-request CI: the same reader abstraction
 * and parser the materializer uses on commits, applied to files on disk.
 */
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import { type DirectoryReader, joinPath } from './directory-reader.ts';
import { diskReader } from './disk-reader.ts';
import { TRANSACTION_FILE } from './file-names.ts';
import { loadDirectory } from './load-directory.ts';
import { type ParseOptions, resolveLimits } from './options.ts';
import { type DirectoryParser, directoryParser, inlineParser } from './parse-pool.ts';

export const DEFAULT_TRANSACTIONS_ROOT = 'transactions';

/** Directories validated at once: enough to keep the disk busy while one is parsed. */
const READ_AHEAD = 8;

export interface ValidateOptions extends ParseOptions {
  /** Folder holding the transaction directories, relative to the repository root. */
  transactionsRoot?: string;
}

export interface DirectoryValidation {
  /** Path of the directory, relative to what was validated. */
  path: string;
  ok: boolean;
  diagnostics: Diagnostic[];
}

export interface TreeValidation {
  ok: boolean;
  directories: DirectoryValidation[];
  /** Problems that are not about one directory (e.g. nothing to validate was found). */
  diagnostics: Diagnostic[];
}

/**
 * Validates `target`: a transaction directory (it holds transaction.yaml), a repository root
 * (it holds `<transactionsRoot>/`), or the transactions root itself.
 */
export async function validateTree(target: string, options: ValidateOptions): Promise<TreeValidation> {
  const dir = resolve(target);
  const root = options.transactionsRoot ?? DEFAULT_TRANSACTIONS_ROOT;
  if (await isFile(join(dir, TRANSACTION_FILE))) {
    const single = await validateDirectory(diskReader(dirname(dir)), basename(dir), options);
    return { ok: single.ok, directories: [single], diagnostics: [] };
  }
  if (await isDirectory(join(dir, ...root.split('/')))) return validateAll(diskReader(dir), root, options);
  if (basename(dir) === basename(root)) return validateAll(diskReader(dir), '', options);
  const problem: Diagnostic = {
    code: 'missing-transaction-file',
    file: target,
    message: `nothing to validate: neither ${TRANSACTION_FILE} nor a ${root}/ folder is there`,
  };
  return { ok: false, directories: [], diagnostics: [problem] };
}

async function validateAll(
  reader: DirectoryReader,
  root: string,
  options: ParseOptions,
): Promise<TreeValidation> {
  const entries = (await reader.list(root)) ?? [];
  const names = entries
    .filter((e) => e.type === 'directory')
    .map((e) => e.name)
    .sort();
  // With a few directories in flight, the next ones' files are read while one is parsed (400
  // directories: 1.6 s less spent waiting on the disk), on a thread of its own when there are
  // many (parse-pool.ts), as a poll parses them. The window bounds what is held in memory at
  // once; results keep the sorted order.
  const directories: DirectoryValidation[] = new Array(names.length);
  // A one-shot command on a CI runner: every core parses, up to four threads (~30 MiB each).
  const parser = directoryParser(options, names.length, { threads: Math.min(availableParallelism(), 4) });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < names.length; i = next++) {
      directories[i] = await validateDirectory(reader, joinPath(root, names[i] as string), options, parser);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(READ_AHEAD, names.length) }, worker));
  } finally {
    await parser.close();
  }
  return { ok: directories.every((d) => d.ok), directories, diagnostics: [] };
}

async function validateDirectory(
  reader: DirectoryReader,
  path: string,
  options: ParseOptions,
  parser: DirectoryParser = inlineParser(options),
): Promise<DirectoryValidation> {
  const result = await parser.parse(await loadDirectory(reader, path, resolveLimits(options.limits)));
  return { path, ok: result.ok, diagnostics: result.ok ? [] : result.diagnostics };
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
