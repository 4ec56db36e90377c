/**
 * A small file Janus is pointed to (a mounted Secret or ConfigMap: the allowed signers, the
 * results signing key) read at each use and parsed again only when its text changed, so an edit
 * takes effect at the next use without a restart, as the Git token file does. The one place that
 * knows how: read, bound, compare, parse, and say what could not be read.
 */
import { readFile } from 'node:fs/promises';

export interface RereadOptions<T> {
  /** "the allowed signers file": names it in every message. */
  what: string;
  /** A larger file is refused before it is parsed. */
  maxBytes: number;
  /** Throws for a text it cannot use; its message is carried in the refusal. */
  parse: (text: string) => T;
  /** The caller's error type (expected, with the message given). */
  refuse: (message: string, cause?: unknown) => Error;
}

export interface RereadFile<T> {
  readonly path: string;
  /** The value as the file says now; `changed` when its text differs from the previous read. */
  read(): Promise<{ value: T; changed: boolean }>;
}

export function rereadFile<T>(path: string, opts: RereadOptions<T>): RereadFile<T> {
  let last: { text: string; value: T } | undefined;
  return {
    path,
    async read() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw opts.refuse(`cannot read ${opts.what} ${path} (${code})`, error);
      }
      if (last?.text === text) return { value: last.value, changed: false };
      if (Buffer.byteLength(text) > opts.maxBytes) {
        throw opts.refuse(`${opts.what} ${path} is larger than ${sizeOf(opts.maxBytes)}`);
      }
      let value: T;
      try {
        value = opts.parse(text);
      } catch (error) {
        throw opts.refuse(`${opts.what} ${path}: ${(error as Error).message}`, error);
      }
      last = { text, value };
      return { value, changed: true };
    },
  };
}

const sizeOf = (bytes: number) => {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
};
