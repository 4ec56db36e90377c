/**
 * A render that read SOPS-encrypted files (docs/sources.md, "Secrets"): which rendered objects
 * carry what was decrypted, and so are kept encrypted in the Transaction (its changes'
 * `sopsContent`, decrypted by the controller only when applied, with the namespace's keys),
 * and which would carry it in clear and so refuse the commit. Every object of a kind SOPS content
 * may be applied to (a Secret; the kinds --sops-kinds allows) is kept encrypted; any other object
 * that holds a decrypted value (as it is, JSON-escaped or base64-encoded), or a decrypted file
 * whole, is refused, naming it and the file; so is a kept-encrypted object whose metadata (stored
 * in clear) holds one. Values shorter than MIN_SOUGHT characters are not
 * looked for: "true" or "3" would be found everywhere. The check is pure; sealChanges encrypts.
 *
 * Sealed to the recipients of the namespace's own age keys (the Secret janus-sops-age, as the
 * source's identity read it for the render), never to those the files name: a file pushed
 * encrypted to the namespace's key and to its author's would otherwise have every sealed object of
 * the render, values from files its author cannot open, encrypted to that author too, in a
 * Transaction anyone who reads Transactions can read. The controller opens `sopsContent` with the
 * namespace's keys (src/changes/sops-content.ts): to each of them, so any one opens it.
 */
import type { Change } from '../api/v1alpha1/index.ts';
import { sopsKindRefusal } from '../changes/sops-kinds.ts';
import type { KubeObject } from '../kube/resources.ts';
import { type DecryptedInput, decryptedForms } from '../render/decrypt-inputs.ts';
import { encryptObject, type SealingKey, sealingKey } from '../sops/encrypt.ts';
import { identityKey, identityOf } from './inventory.ts';
import { MAX_REFUSALS, type ObjectRefusal } from './object-policy.ts';

/** The shortest decrypted value looked for in objects that may not carry one. */
export const MIN_SOUGHT = 6;

export interface Sealed {
  /** The age recipients of the namespace's keys, each once. */
  recipients: string[];
  /** identityKey of each object kept encrypted. */
  objects: Set<string>;
}

export type SealCheck =
  | { ok: true; sealed: Sealed | undefined }
  | { ok: false; refusals: ObjectRefusal[]; more: number };

export function sealedObjects(
  objects: readonly KubeObject[],
  decrypted: readonly DecryptedInput[],
  sopsKinds: readonly string[],
  recipients: readonly string[],
): SealCheck {
  if (decrypted.length === 0) return { ok: true, sealed: undefined };
  const sought = decrypted.flatMap((input) =>
    [...input.values, input.text]
      .filter((v) => v.length >= MIN_SOUGHT)
      .flatMap(decryptedForms)
      .map((form) => ({ form, file: input.file })),
  );
  const sealed: Sealed = {
    recipients: [...new Set(recipients)],
    objects: new Set(),
  };
  const refusals: ObjectRefusal[] = [];
  let refused = 0;
  const carried = (part: unknown) => {
    const json = JSON.stringify(part);
    return sought.find((s) => json.includes(s.form));
  };
  for (const obj of objects) {
    const sealable = sopsKindRefusal(obj.apiVersion, obj.kind, sopsKinds) === undefined;
    // A sealed object's identity stays in clear (the target is read from it): its metadata may
    // not carry what was decrypted either.
    const found = sealable ? carried(obj.metadata) : carried(obj);
    if (!found) {
      if (sealable) sealed.objects.add(identityKey(identityOf(obj)));
      continue;
    }
    const object = `${obj.apiVersion} ${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
    if (++refused <= MAX_REFUSALS) {
      refusals.push({
        object,
        rule: 'sops',
        message: sealable
          ? `${object} carries a value decrypted from ${found.file} in its metadata: its name, labels and annotations are stored in clear (only the rest is kept encrypted until applied). Keep decrypted values out of metadata`
          : `${object} carries a value decrypted from ${found.file}: only a Secret, or a kind --sops-kinds allows, may (it is kept encrypted until applied; this object would be stored in clear). Put the value in a Secret and reference it`,
      });
    }
  }
  if (refused > 0) return { ok: false, refusals, more: refused - refusals.length };
  return { ok: true, sealed };
}

/**
 * The changes with each Apply of a sealed object carrying its content encrypted (`sopsContent`)
 * instead of in clear. An object with nothing beside its identity keeps its content. One data key
 * for them all, wrapped once per recipient (age's X25519 is the cost: ~0.5 ms a wrap), whatever
 * the number of objects.
 */
export async function sealChanges(changes: readonly Change[], sealed: Sealed | undefined): Promise<Change[]> {
  if (!sealed) return [...changes];
  let key: SealingKey | undefined;
  const out: Change[] = [];
  for (const change of changes) {
    if (change.type !== 'Apply' || !change.content || !sealed.objects.has(identityKey(change.target))) {
      out.push(change);
      continue;
    }
    key ??= await sealingKey(sealed.recipients);
    const sopsContent = await encryptObject(change.content, key);
    if (sopsContent === undefined) {
      out.push(change);
      continue;
    }
    const { content: _clear, ...rest } = change;
    out.push({ ...rest, sopsContent });
  }
  return out;
}
