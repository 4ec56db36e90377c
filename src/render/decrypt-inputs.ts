/**
 * The SOPS-encrypted files a render reads (docs/sources.md, "Secrets"), decrypted in the private
 * checkout before the tool runs: each file written in clear over its encrypted self (0600), so the
 * plaintext exists only there, and goes with the checkout when the render ends, however it ends
 * (renderer.ts removes it). Which files: those the render reads (every file a kustomization names,
 * a chart's values files, a plain folder's manifests), recognised by their sops metadata. The keys
 * are asked for once, at the first encrypted file; without a `decryption` (`janus validate`,
 * offline) the files are left encrypted.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SopsError } from '../sops/sops-error.ts';
import { decryptSopsFile, looksSopsEncrypted } from '../sops/sops-file.ts';
import { escapeRegExp } from '../text/escape-regexp.ts';
import type { InputProblem } from './references.ts';
import { RenderKeyError } from './render-error.ts';

export interface Decryption {
  /** The source namespace's age identities, as its ServiceAccount reads them; RenderKeyError when it cannot. */
  identities(): Promise<readonly string[]>;
}

/** A file of the render that was decrypted: what a rendered object must not carry in clear. */
export interface DecryptedInput {
  readonly file: string;
  /** The values that were encrypted. */
  readonly values: readonly string[];
  /** The whole file in clear (a generator's `files:` entry is the file itself). */
  readonly text: string;
  readonly recipients: readonly string[];
}

/**
 * Bytes of a file of the render that is read as a SOPS file (parsed on Janus's own thread to tell,
 * then decrypted there): a transaction file's bound (src/gitops/options.ts). The YAML parse takes
 * ~60x the text, far more for dense flow collections.
 */
export const MAX_SOPS_INPUT_BYTES = 1024 * 1024;

/** What every SOPS file holds in any format (`sops:`/`mac:`, `[sops]`/`mac =`, `sops_mac=`), found without parsing. */
function mayBeSopsEncrypted(text: string): boolean {
  return /\bsops\b/.test(text) && /\bmac\b|\bsops_mac\b/.test(text);
}

export type DecryptOutcome = { ok: true; decrypted: DecryptedInput[] } | { ok: false; problem: InputProblem };

export async function decryptInputs(
  root: string,
  files: Iterable<string>,
  decryption: Decryption | undefined,
): Promise<DecryptOutcome> {
  const decrypted: DecryptedInput[] = [];
  if (!decryption) return { ok: true, decrypted };
  let identities: readonly string[] | undefined;
  for (const file of [...new Set(files)].sort()) {
    const full = join(root, file);
    const text = await readFile(full, 'utf8');
    if (Buffer.byteLength(text) > MAX_SOPS_INPUT_BYTES) {
      // Not parsed (looksSopsEncrypted, the decryption parse the YAML on this thread): refused
      // when it may be encrypted, left to the tool (in the sandbox) when it cannot be.
      if (!mayBeSopsEncrypted(text)) continue;
      return {
        ok: false,
        problem: {
          file,
          message: `${file} may be SOPS-encrypted and is more than ${MAX_SOPS_INPUT_BYTES} bytes; an encrypted file of a render is at most that`,
        },
      };
    }
    if (!looksSopsEncrypted(file, text)) continue;
    try {
      identities ??= await decryption.identities();
      const opened = await decryptSopsFile(file, text, identities);
      await rm(full);
      await writeFile(full, opened.text, { mode: 0o600, flag: 'wx' });
      decrypted.push({ file, values: opened.values, text: opened.text, recipients: opened.recipients });
    } catch (e) {
      if (e instanceof RenderKeyError)
        return { ok: false, problem: { file, message: `${file} is SOPS-encrypted, and ${e.message}` } };
      if (e instanceof SopsError) return { ok: false, problem: { file, message: e.message } };
      throw e;
    }
  }
  return { ok: true, decrypted };
}

/**
 * The forms a decrypted value takes inside a JSON or YAML text, a message or an object: as it is,
 * JSON-escaped (a double-quoted string, Go's %q) and base64-encoded (a Secret's `data`, a
 * ConfigMap's `binaryData`).
 */
export function decryptedForms(value: string): string[] {
  return [value, JSON.stringify(value).slice(1, -1), Buffer.from(value).toString('base64')];
}

/** Decrypted values shorter than this are not redacted from a message: "3" is in every message. */
const MIN_REDACTED = 4;

/**
 * `text` with every decrypted value of MIN_REDACTED characters or more replaced with
 * `(decrypted)`, in each form a message or a YAML diff may quote it: as it is, JSON-escaped (a
 * double-quoted YAML or JSON string, Go's %q), base64-encoded (a Secret's or a ConfigMap's
 * binaryData), and line by line (a YAML block scalar prints a value of several lines one line at a
 * time). A value transformed on the way (a template's `upper`, a part of it cut out) is not
 * recognised.
 */
export function redactDecrypted(text: string, decrypted: readonly DecryptedInput[]): string {
  return decryptedRedactor(decrypted)(text);
}

/** redactDecrypted for many texts: the values' forms gathered once. */
export function decryptedRedactor(decrypted: readonly DecryptedInput[]): (text: string) => string {
  const forms = new Set<string>();
  for (const value of new Set(decrypted.flatMap((d) => d.values))) {
    for (const form of [...decryptedForms(value), ...value.split(/\r?\n/).map((line) => line.trim())])
      if (form.length >= MIN_REDACTED) forms.add(form);
  }
  if (forms.size === 0) return (text) => text;
  // One pass, longest first: a value inside another is not replaced inside its replacement.
  const any = new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
  return (text) => text.replace(any, '(decrypted)');
}
