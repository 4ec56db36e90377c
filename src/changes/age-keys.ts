/**
 * The age identities that decrypt a namespace's SOPS-encrypted changes: every key of the Secret
 * `janus-sops-age` in the Transaction's namespace whose name ends in `.agekey` (Flux's
 * convention, so one Secret serves both), read through the Objects client of the caller: the
 * Transaction's ServiceAccount in the controller, the person's own credentials in `janus plan`.
 * Janus never reads it with its own rights, so a team decrypts only what its account may, and one
 * namespace's transactions cannot use another's keys.
 */
import { isForbidden, isNotFound } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import { parseAgeKeys } from '../sops/data-key.ts';

export const AGE_KEYS_SECRET = 'janus-sops-age';
const KEY_SUFFIX = '.agekey';

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/** The keys could not be read: names the Secret and who asked; never a key. Not a KubeApiError. */
export class AgeKeysError extends Error {
  override readonly name = 'AgeKeysError';
}

export async function readAgeKeys(objects: Objects, namespace: string): Promise<string[]> {
  const who = objects.client.impersonating ?? 'you';
  const what = `Secret "${namespace}/${AGE_KEYS_SECRET}"`;
  let secret: Secret;
  try {
    secret = await objects.get<Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      name: AGE_KEYS_SECRET,
    });
  } catch (e) {
    if (isForbidden(e)) {
      throw new AgeKeysError(
        `${who} may not read ${what}, which holds the age keys for SOPS-encrypted changes (grant get on it to the Transaction's ServiceAccount); the API server said: ${e.serverMessage}`,
      );
    }
    if (isNotFound(e)) {
      throw new AgeKeysError(`${what}, which holds the age keys for SOPS-encrypted changes, does not exist`);
    }
    throw e;
  }
  const keys = Object.entries(secret.data ?? {})
    .filter(([name]) => name.endsWith(KEY_SUFFIX))
    .flatMap(([, value]) => parseAgeKeys(Buffer.from(value, 'base64').toString('utf8')));
  if (keys.length === 0)
    throw new AgeKeysError(`${what} has no key ending in ${KEY_SUFFIX} holding an age identity`);
  return keys;
}
