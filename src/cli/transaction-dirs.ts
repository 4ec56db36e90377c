/**
 * Finds and parses the transaction directories a path designates, as `janus validate` does: a
 * transaction directory (it holds transaction.yaml), a repository root (it holds the transactions
 * root folder), or the transactions root itself.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  DEFAULT_TRANSACTIONS_ROOT,
  diskReader,
  joinPath,
  type ParseOptions,
  type ParseResult,
  parseTransactionDirectory,
  TRANSACTION_FILE,
} from '../gitops/index.ts';
import { UsageError } from './command.ts';

export async function parseDirectories(
  target: string,
  options: ParseOptions & { transactionsRoot?: string },
): Promise<ParseResult[]> {
  const dir = resolve(target);
  const root = options.transactionsRoot ?? DEFAULT_TRANSACTIONS_ROOT;
  if (await isFile(join(dir, TRANSACTION_FILE))) {
    // Paths in messages are relative to the working directory when the directory is below it,
    // so "file:line" points where the person (or the CI annotator) looks.
    const fromCwd = relative(process.cwd(), dir);
    const below = fromCwd !== '' && !fromCwd.startsWith('..') && !isAbsolute(fromCwd);
    const [root, path] = below
      ? [process.cwd(), fromCwd.split(sep).join('/')]
      : [dirname(dir), basename(dir)];
    return [await parseTransactionDirectory(diskReader(root), path, options)];
  }
  const [reader, base] = (await isDirectory(join(dir, ...root.split('/'))))
    ? [diskReader(dir), root]
    : basename(dir) === basename(root)
      ? [diskReader(dir), '']
      : [undefined, ''];
  if (!reader) {
    throw new UsageError(
      `${target}: neither ${TRANSACTION_FILE} nor a ${root}/ folder is there: nothing to plan`,
    );
  }
  const names = ((await reader.list(base)) ?? [])
    .filter((e) => e.type === 'directory')
    .map((e) => e.name)
    .sort();
  const results: ParseResult[] = [];
  for (const name of names)
    results.push(await parseTransactionDirectory(reader, joinPath(base, name), options));
  return results;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
