/**
 * Why a SOPS-encrypted file cannot be used. The message names the file and says what is wrong; it
 * never carries a decrypted value, a data key or an identity, so it may be logged, put in an
 * Event, a condition or the results branch.
 */
export class SopsError extends Error {
  readonly file: string;
  /** What is wrong, without the file's name (nor the field's, when `field` is set). */
  readonly reason: string;
  /** The key path of the value at fault, when it is one value (a diagnostic points at its line). */
  readonly field: readonly string[] | undefined;

  constructor(file: string, reason: string, field?: readonly string[]) {
    super(`${file}: ${field ? `${field.join('.')} ` : ''}${reason}`);
    this.name = 'SopsError';
    this.file = file;
    this.reason = reason;
    this.field = field;
  }
}
