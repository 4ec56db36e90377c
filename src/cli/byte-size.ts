/** Sizes given on the command line: `67108864`, `64Mi`, `64MiB`, `512Ki`, `1Gi`. */
import { UsageError } from './command.ts';

const UNITS: Record<string, number> = { '': 1, ki: 1024, mi: 1024 ** 2, gi: 1024 ** 3 };

/** Bytes, or a whole number with a binary suffix (Ki, Mi, Gi, optionally followed by B). */
export function parseByteSize(value: string, flag: string): number {
  const match = /^(\d+)\s*([kmg]i)?b?$/i.exec(value.trim());
  const unit = UNITS[(match?.[2] ?? '').toLowerCase()];
  const bytes = match && unit !== undefined ? Number(match[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(bytes)) {
    throw new UsageError(
      `--${flag}: expected a size in bytes, or with Ki, Mi or Gi (e.g. 64Mi), got "${value}"`,
    );
  }
  return bytes;
}
