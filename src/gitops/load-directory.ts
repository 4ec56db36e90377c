/**
 * Reads one transaction directory through a DirectoryReader, enforcing the size limits before
 * anything is parsed. Problems with the input become diagnostics; reader failures (I/O) propagate,
 * because a transient error must not be reported as a rejected directory.
 */

import { compareCodeUnits } from '../text/order.ts';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import { type DirectoryReader, joinPath, TooManyEntriesError } from './directory-reader.ts';
import { classifyFile, type FileRole } from './file-names.ts';
import type { ParseLimits } from './options.ts';

export interface LoadedFile {
  name: string;
  /** Repository-relative path, used in diagnostics. */
  path: string;
  role: Exclude<FileRole, { role: 'unknown' }>;
  text: string;
}

export interface LoadedDirectory {
  /** Repository-relative path of the directory. */
  path: string;
  /** The directory's own name: the Transaction's name. */
  name: string;
  /** Readable files with a known role, in lexicographic order. */
  files: LoadedFile[];
  /** Change files present, including those that could not be read. */
  changeFileCount: number;
  diagnostics: Diagnostic[];
}

const ENTRY_PROBLEM = {
  directory: 'subdirectories are not allowed in a transaction directory',
  symlink: 'symbolic links are not followed; put the file itself in the directory',
  submodule: 'submodules are not allowed in a transaction directory',
  other: 'only regular files are allowed in a transaction directory',
} as const;

export async function loadDirectory(
  reader: DirectoryReader,
  path: string,
  limits: ParseLimits,
): Promise<LoadedDirectory> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const loaded: LoadedDirectory = { path, name, files: [], changeFileCount: 0, diagnostics: [] };
  const report = (d: Diagnostic) => loaded.diagnostics.push(d);
  const entries = await reader.list(path, limits.maxEntries).catch((error: unknown) => {
    if (!(error instanceof TooManyEntriesError)) throw error;
    report({ code: 'too-many-files', file: path, message: error.message.slice(path.length + 2) });
    return null;
  });
  if (entries === null) return loaded;
  if (entries === undefined) {
    report({
      code: 'missing-transaction-file',
      file: path,
      message: 'the transaction directory does not exist',
    });
    return loaded;
  }
  if (entries.length > limits.maxEntries) {
    report({
      code: 'too-many-files',
      file: path,
      message: `the directory has ${entries.length} entries; at most ${limits.maxEntries} are allowed`,
    });
    return loaded;
  }
  // Change files apply in code-unit order of their names, whatever the locale.
  entries.sort((a, b) => compareCodeUnits(a.name, b.name));
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let totalBytes = 0;
  for (const entry of entries) {
    const filePath = joinPath(path, entry.name);
    if (entry.type !== 'file') {
      report({ code: 'unknown-file', file: filePath, message: ENTRY_PROBLEM[entry.type] });
      continue;
    }
    const role = classifyFile(entry.name);
    if (role.role === 'unknown') {
      report({ code: 'unknown-file', file: filePath, message: `unexpected file: ${role.hint}` });
      continue;
    }
    if (role.role === 'change') loaded.changeFileCount++;
    const content = await reader.read(filePath, limits.maxFileBytes);
    if (!content.ok) {
      report({
        code: 'file-too-large',
        file: filePath,
        message: `the file is ${content.size} bytes; the limit is ${limits.maxFileBytes} bytes per file`,
      });
      continue;
    }
    totalBytes += content.bytes.length;
    if (totalBytes > limits.maxTotalBytes) {
      report({
        code: 'directory-too-large',
        file: path,
        message: `the directory's files exceed ${limits.maxTotalBytes} bytes in total (reached at ${entry.name})`,
      });
      return loaded;
    }
    try {
      loaded.files.push({ name: entry.name, path: filePath, role, text: decoder.decode(content.bytes) });
    } catch {
      report({ code: 'unreadable-file', file: filePath, message: 'the file is not valid UTF-8 text' });
    }
  }
  if (!entries.some((e) => e.type === 'file' && classifyFile(e.name).role === 'transaction')) {
    report({
      code: 'missing-transaction-file',
      file: joinPath(path, 'transaction.yaml'),
      message: 'every transaction directory needs a transaction.yaml (kind: Transaction)',
    });
  }
  return loaded;
}
