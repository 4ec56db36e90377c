/**
 * Why a SOPS-encrypted file cannot be used. The message names the file and says what is wrong; it
 * never carries a decrypted value, a data key or an identity, so it may be logged, put in an
 * Event, a condition or the results branch.
 */
export class SopsError extends Error {
  readonly file: string;

  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = 'SopsError';
    this.file = file;
  }
}
