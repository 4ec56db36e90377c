/**
 * A file of any format sops encrypts, told apart as sops tells them (by its extension: `.yaml`,
 * `.yml`, `.json`, `.env`, `.ini`, anything else binary), recognised by its metadata, and written
 * back in clear as `sops decrypt` writes it: YAML as YAML (comments are not kept), JSON as JSON,
 * dotenv as dotenv, a binary file as its bytes. INI is recognised and refused.
 */
import { isMap, stringify } from 'yaml';
import { parseYamlNodes } from '../yaml/yaml-file.ts';
import { decryptSops } from './decrypt.ts';
import { readSopsDocument } from './document.ts';
import { decryptDotenv, isSopsDotenv } from './dotenv.ts';
import { SopsError } from './sops-error.ts';

export type SopsFormat = 'yaml' | 'json' | 'dotenv' | 'ini' | 'binary';

/** sops's format of a file, by its name. */
export function sopsFormatOf(path: string): SopsFormat {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  if (/\.ya?ml$/.test(name)) return 'yaml';
  if (name.endsWith('.json')) return 'json';
  if (name.endsWith('.env')) return 'dotenv';
  if (name.endsWith('.ini')) return 'ini';
  return 'binary';
}

/**
 * Whether the file is sops-encrypted: a document with a top-level `sops` mapping (YAML, and JSON,
 * which the binary format is too), a `sops_mac=` line (dotenv), a `[sops]` section with a `mac`
 * (INI). A look at the text first; only a file that may be one is parsed.
 */
export function looksSopsEncrypted(path: string, text: string): boolean {
  switch (sopsFormatOf(path)) {
    case 'dotenv':
      return isSopsDotenv(text);
    case 'ini':
      return /^\[sops\]\s*$/m.test(text) && /^mac\s*=\s*ENC\[/m.test(text);
    default: {
      if (!/["']?sops["']?\s*:/.test(text) || !/\bmac\b/.test(text)) return false;
      const docs = parseYamlNodes(text);
      return (
        typeof docs !== 'string' && docs.some((d) => isMap(d.contents) && isMap(d.contents.get('sops', true)))
      );
    }
  }
}

export interface DecryptedFile {
  /** The file in clear, as `sops decrypt` writes it. */
  text: string;
  /** Every value that was encrypted (comments aside), for the caller to look for in what it makes. */
  values: string[];
  /** The age recipients it was encrypted for. */
  recipients: string[];
}

/** Throws SopsError naming the file. */
export async function decryptSopsFile(
  path: string,
  text: string,
  identities: readonly string[],
): Promise<DecryptedFile> {
  const format = sopsFormatOf(path);
  switch (format) {
    case 'dotenv':
      return decryptDotenv(path, text, identities);
    case 'ini':
      throw new SopsError(
        path,
        'is a sops-encrypted INI file, which Janus does not decrypt: encrypt it as YAML, JSON, dotenv (.env) or a binary file',
      );
    default: {
      const values: string[] = [];
      const value = await decryptSops(path, text, identities, (v) => values.push(String(v)));
      const recipients = readSopsDocument(path, text).metadata.age.map((a) => a.recipient);
      if (format === 'binary') {
        if (typeof value.data !== 'string' || Object.keys(value).length !== 1)
          throw new SopsError(path, 'is no sops-encrypted binary file (one "data" value)');
        return { text: value.data, values: [value.data], recipients };
      }
      const out =
        format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 });
      return { text: out, values, recipients };
    }
  }
}
