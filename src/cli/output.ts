/**
 * Where output goes: people read stderr, programs read stdout. A command prints its human output
 * on stderr and, with `-o json|yaml`, a machine-readable document on stdout, so
 * `janus status -o json | jq` never mixes the two.
 */
import { stringify } from 'yaml';
import { type Flags, UsageError } from './command.ts';

export interface Sink {
  write(text: string): unknown;
}

export interface Streams {
  /** Machine output. */
  stdout: Sink;
  /** Human output: tables, progress, diagnostics. */
  stderr: Sink & { isTTY?: boolean; columns?: number };
}

export const processStreams = (): Streams => ({ stdout: process.stdout, stderr: process.stderr });

export type OutputFormat = 'json' | 'yaml';

export function outputFlag<const Formats extends readonly string[]>(formats: Formats, extra = '') {
  return {
    output: {
      type: 'string',
      short: 'o',
      env: 'JANUS_OUTPUT',
      placeholder: formats.join('|'),
      description: `print a machine-readable document on stdout (${formats.join(' or ')})${extra}; human output stays on stderr`,
    },
  } as const satisfies Flags;
}

export const OUTPUT_FLAG = outputFlag(['json', 'yaml'] as const);

/** Validates `-o`: undefined means human output only. */
export function parseOutput<const F extends string>(
  value: string | undefined,
  formats: readonly F[],
): F | undefined {
  if (value === undefined || value === '') return undefined;
  if ((formats as readonly string[]).includes(value)) return value as F;
  throw new UsageError(`-o/--output: expected ${formats.join(' or ')}, got "${value}"`);
}

/** One machine-readable document; streams of them (watch) are concatenated JSON or `---`-separated YAML. */
export function formatDocument(value: unknown, format: OutputFormat): string {
  return format === 'json'
    ? `${JSON.stringify(value, null, 2)}\n`
    : `---\n${stringify(value, { lineWidth: 0 })}`;
}
