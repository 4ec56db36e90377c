/**
 * What can be checked of a sops-encrypted document without its key (`janus validate`, and the
 * poller before it makes a Transaction): the metadata Janus can use, every value that should be
 * encrypted well-formed, and the fields that name the target in clear, since the target is read
 * from them before anything is decrypted.
 */
import { readSopsDocument, walkValues } from './document.ts';
import { parseEncryptedValue } from './enc-value.ts';
import { SopsError } from './sops-error.ts';

/** The fields that name a Kubernetes object. */
const IDENTITY_PATHS = [['apiVersion'], ['kind'], ['metadata', 'name'], ['metadata', 'namespace']] as const;

/** Throws SopsError naming the file and the first problem. */
export function checkSopsStructure(file: string, text: string): void {
  const d = readSopsDocument(file, text);
  for (const path of IDENTITY_PATHS) {
    if (d.metadata.isEncrypted(path)) {
      throw new SopsError(
        file,
        `is encrypted, so the target cannot be read before decryption: encrypt only the secret fields, e.g. sops encrypt --encrypted-regex '^(data|stringData)$'`,
        path,
      );
    }
  }
  walkValues(d, (path, value) => {
    if (!d.metadata.isEncrypted(path) || value === '') return value;
    if (typeof value !== 'string') throw new SopsError(file, 'should be encrypted but is in clear', path);
    const parts = parseEncryptedValue(value);
    if (typeof parts === 'string') throw new SopsError(file, parts, path);
    return value;
  });
}

/** Whether a parsed document carries sops metadata: a top-level `sops` mapping, as sops writes it. */
export function hasSopsMetadata(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const sops = (value as Record<string, unknown>).sops;
  return typeof sops === 'object' && sops !== null && !Array.isArray(sops);
}
