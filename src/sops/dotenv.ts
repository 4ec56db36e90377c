/**
 * A sops-encrypted dotenv file (sops's stores/dotenv): `KEY=value` lines, `#` comments (sops
 * encrypts them too), `\n` in a value written as the two characters, and the metadata flattened
 * into `sops_…` lines (`sops_age__list_0__map_recipient=…`). Decrypted and written back as
 * `sops decrypt` writes it, the MAC verified as for YAML.
 */
import { unwrapDataKey } from './data-key.ts';
import { macHash, openLeaf, verifyMac } from './decrypt.ts';
import { readMetadata } from './metadata.ts';
import { SopsError } from './sops-error.ts';

const METADATA_PREFIX = 'sops_';

type Line = { comment: string } | { key: string; value: string };

/** Whether `text` is a dotenv file sops encrypted: it has a `sops_mac=` line. */
export function isSopsDotenv(text: string): boolean {
  return /^sops_mac=ENC\[/m.test(text);
}

/**
 * The file in clear, each value (not comments) that was encrypted, and its age recipients. Throws
 * SopsError.
 */
export async function decryptDotenv(
  file: string,
  text: string,
  identities: readonly string[],
): Promise<{ text: string; values: string[]; recipients: string[] }> {
  const lines = parseLines(file, text);
  const raw: Record<string, unknown> = Object.create(null);
  const body: Line[] = [];
  for (const line of lines) {
    if ('key' in line && line.key.startsWith(METADATA_PREFIX))
      setFlattened(file, raw, line.key.slice(METADATA_PREFIX.length), line.value);
    else body.push(line);
  }
  if (raw.mac_only_encrypted === 'true') raw.mac_only_encrypted = true;
  const metadata = readMetadata(file, raw);
  const dataKey = await unwrapDataKey(file, metadata.age, identities);
  const hash = macHash(metadata);
  const values: string[] = [];
  const out = body.map((line) => {
    if ('comment' in line) {
      const opened = openLeaf(file, metadata, dataKey, hash, [], line.comment);
      return `#${String(opened)}`;
    }
    const value = String(
      openLeaf(file, metadata, dataKey, hash, [line.key], line.value, (v) => values.push(String(v))),
    );
    return `${line.key}=${value.replaceAll('\n', '\\n')}`;
  });
  verifyMac(file, metadata.mac, metadata.lastModified, dataKey, hash.digest('hex').toUpperCase());
  const recipients = metadata.age.map((a) => a.recipient);
  return { text: out.map((l) => `${l}\n`).join(''), values, recipients };
}

function parseLines(file: string, text: string): Line[] {
  const lines: Line[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      lines.push({ comment: line.slice(1) });
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new SopsError(file, `line ${i + 1} is no KEY=value line`);
    lines.push({ key: line.slice(0, eq), value: line.slice(eq + 1).replaceAll('\\n', '\n') });
  }
  return lines;
}

/** Entries of a flattened metadata list: far more age recipients than any file has. */
const MAX_LIST_INDEX = 255;

/** sops's stores/flatten.go, reversed: `age__list_0__map_enc` is age[0].enc. */
function setFlattened(file: string, into: Record<string, unknown>, flat: string, value: string): void {
  const parts = flat.split(/(__list_|__map_)/);
  for (const [i, part] of parts.entries()) {
    const index = parts[i - 1] === '__list_';
    if (index ? !/^\d{1,3}$/.test(part) || Number(part) > MAX_LIST_INDEX : !/^[a-z_]+$/.test(part)) {
      throw new SopsError(file, `sops_${flat} is no sops metadata Janus reads`);
    }
  }
  let at: Record<string, unknown> | unknown[] = into;
  let key: string | number = parts[0] ?? '';
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const next: string | number = parts[i] === '__list_' ? Number(parts[i + 1]) : (parts[i + 1] ?? '');
    const container = (at as Record<string | number, unknown>)[key];
    const child =
      container !== null && typeof container === 'object'
        ? container
        : typeof next === 'number'
          ? []
          : Object.create(null);
    (at as Record<string | number, unknown>)[key] = child;
    at = child as Record<string, unknown>;
    key = next;
  }
  (at as Record<string | number, unknown>)[key] = value;
}
