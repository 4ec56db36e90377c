/**
 * A change whose manifest is SOPS-encrypted (change.sopsContent): decrypted only here, when the
 * change is dry-run or applied, into a copy of the item that lives for that one request. The
 * Transaction keeps the encrypted text; no status, condition, Event, log line or snapshot is made
 * from the decrypted manifest (a refusal says which file and why, never a value).
 */
import { decryptSops } from '../sops/decrypt.ts';
import { SopsError } from '../sops/sops-error.ts';
import { AgeKeysError, readAgeKeys } from './age-keys.ts';
import type { ChangeContext, ChangeItem } from './change-context.ts';

/**
 * The change cannot be decrypted (no key, not ours, tampered): a refusal of the change, as the API
 * server's 422 is, not a transient error to retry.
 */
export function isDecryptionRefusal(e: unknown): e is SopsError | AgeKeysError {
  return e instanceof SopsError || e instanceof AgeKeysError;
}

/** `item` with its content in clear: itself when it is not encrypted. Throws SopsError, AgeKeysError. */
export async function decryptedItem(ctx: ChangeContext, item: ChangeItem): Promise<ChangeItem> {
  const encrypted = item.change.sopsContent;
  if (encrypted === undefined) return item;
  const file = 'sopsContent';
  const identities = ctx.ageIdentities ?? (await readAgeKeys(ctx.objects, ctx.txn.metadata.namespace ?? ''));
  const content = await decryptSops(file, encrypted, identities);
  checkIdentity(file, item, content);
  const { sopsContent: _encrypted, ...change } = item.change;
  return { ...item, change: { ...change, content } };
}

/**
 * The identifying fields were in clear in Git, where the target was read from them; decrypted,
 * they must still name that target (an encrypted identity would choose another object).
 */
function checkIdentity(file: string, item: ChangeItem, content: Record<string, unknown>): void {
  const meta = (content.metadata ?? {}) as Record<string, unknown>;
  const fields: [string, unknown, string | undefined][] = [
    ['apiVersion', content.apiVersion, item.target.apiVersion],
    ['kind', content.kind, item.target.kind],
    ['metadata.name', meta.name, item.target.name],
    ['metadata.namespace', meta.namespace, item.target.namespace],
  ];
  for (const [field, actual, expected] of fields) {
    if (actual !== undefined && actual !== expected) {
      throw new SopsError(file, `its ${field} does not name the change's target`);
    }
  }
}
