/**
 * The thread behind parse-pool.ts: parses loaded directories (files already read and decoded)
 * and answers each with its result, the Transaction held as JSON text (held-transaction.ts).
 * Nothing here reads Git or the disk; a directory arrives whole.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { holdParsed } from './held-transaction.ts';
import type { ParseOptions } from './options.ts';
import { parseLoadedDirectory } from './parse-directory.ts';
import type { ParseReply, ParseRequest } from './parse-pool.ts';

const options = workerData as ParseOptions;

parentPort?.on('message', ({ id, directory, source }: ParseRequest) => {
  let reply: ParseReply;
  try {
    reply = { id, result: holdParsed(parseLoadedDirectory(directory, options, source)) };
  } catch (error) {
    // parseLoadedDirectory turns every bad input into diagnostics: anything thrown is a bug.
    reply = { id, failure: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort?.postMessage(reply);
});
