/**
 * An input the renderer refuses before any tool runs (a remote base, a path out of the checkout,
 * a symlink out of it, a plugin, a checkout over its bounds): the failure names the file and, in
 * its message, the entry at fault.
 */
export class RenderInputError extends Error {
  override readonly name = 'RenderInputError';
  /** Relative to the checkout's root. */
  readonly file: string | undefined;
  readonly line: number | undefined;

  constructor(message: string, file?: string, line?: number) {
    super(message);
    this.file = file;
    this.line = line;
  }
}

/**
 * The age keys that decrypt a source's SOPS files cannot be had (no Secret, not readable by the
 * source's ServiceAccount, no key in it): the render fails, naming the first encrypted file.
 */
export class RenderKeyError extends Error {
  override readonly name = 'RenderKeyError';
}
