/**
 * The thread behind output-thread.ts: reads the texts it was given (a tool's output, a plain
 * folder's files) as objects with parseObjects, answers once and ends. Nothing here reads the disk.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseObjects } from './output.ts';
import { MAX_OUTPUT_VALUES, type OutputText, type ThreadParsed } from './output-thread.ts';

const texts = workerData as readonly OutputText[];

function parseAll(): ThreadParsed {
  const objects = [];
  let values = 0;
  for (const { what, text } of texts) {
    const parsed = parseObjects(what, text);
    if (!parsed.ok) return { ok: false, what, message: parsed.message, line: parsed.line };
    for (const object of parsed.objects) values += countValues(object);
    if (values > MAX_OUTPUT_VALUES) {
      return {
        ok: false,
        what,
        bound: 'output',
        message: `${what}: more than ${MAX_OUTPUT_VALUES} values (mappings, sequences, scalars) in the render's objects, more than Janus keeps in memory for one render`,
      };
    }
    objects.push(...parsed.objects);
  }
  return { ok: true, objects };
}

/** Values in `value`, itself included: the YAML parser bounds the nesting (100 levels). */
function countValues(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, item) => n + countValues(item), 1);
  if (value !== null && typeof value === 'object')
    return Object.values(value).reduce((n: number, item) => n + countValues(item), 1);
  return 1;
}

parentPort?.postMessage(parseAll());
