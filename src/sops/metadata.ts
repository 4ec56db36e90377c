/**
 * The `sops:` block of an encrypted file (sops's stores/metadata.go as its YAML and JSON stores
 * write it): the data key wrapped for each age recipient, the MAC and its timestamp, and the rule
 * that says which values are encrypted. What Janus cannot honour is refused by name.
 */
import { parseEncryptedValue } from './enc-value.ts';
import { compileSelectionRegex, MatchBudget, SelectionRegexError } from './selection-regex.ts';
import { SopsError } from './sops-error.ts';

export interface AgeStanza {
  recipient: string;
  /** The data key, age-encrypted to `recipient`, ASCII-armored. */
  enc: string;
}

export interface SopsMetadata {
  age: AgeStanza[];
  /** The MAC, encrypted with the data key and `lastModified` as additional data. */
  mac: string;
  lastModified: string;
  macOnlyEncrypted: boolean;
  /**
   * Whether the value at this key path is encrypted (sops's shouldBeEncrypted). Throws SopsError
   * when the file's selection regexes cost more than MAX_MATCH_WORK over its keys.
   */
  isEncrypted(path: readonly string[]): boolean;
}

/**
 * Bounds on the `sops.age` list, checked before any key is tried: each wrapped key costs an
 * X25519 operation (~0.6 ms of the controller's event loop) per stanza inside it, so a pushed file
 * of 1 MiB of stanzas would hold every tenant's saga for seconds. sops writes one entry per
 * recipient, each an age file to that recipient alone (~350 characters armored).
 */
export const MAX_AGE_RECIPIENTS = 64;
export const MAX_WRAPPED_KEY_CHARS = 1024;

/** Master keys sops supports that Janus does not: a file for these alone cannot be opened. */
const OTHER_KEY_TYPES = ['pgp', 'kms', 'gcp_kms', 'azure_kv', 'hc_vault', 'hckms'] as const;

export function readMetadata(file: string, raw: unknown): SopsMetadata {
  const refuse = (reason: string): never => {
    throw new SopsError(file, reason);
  };
  if (!isRecord(raw)) return refuse('the sops metadata block is not a mapping');
  if (raw.key_groups !== undefined || raw.shamir_threshold !== undefined) {
    refuse(
      'the data key is split across key_groups (Shamir): Janus opens files encrypted for age recipients directly, without key groups',
    );
  }
  for (const option of ['encrypted_comment_regex', 'unencrypted_comment_regex']) {
    if (raw[option] !== undefined)
      refuse(
        `sops's ${option} is not supported (it selects values by YAML comments): use encrypted_regex or unencrypted_suffix`,
      );
  }
  const age = Array.isArray(raw.age) ? raw.age : [];
  if (age.length > MAX_AGE_RECIPIENTS)
    refuse(`sops.age lists ${age.length} recipients: at most ${MAX_AGE_RECIPIENTS} are read`);
  const stanzas = age.map((entry, i): AgeStanza => {
    if (!isRecord(entry) || typeof entry.recipient !== 'string' || typeof entry.enc !== 'string') {
      return refuse(`sops.age[${i}] needs a recipient and an enc`);
    }
    if (entry.enc.length > MAX_WRAPPED_KEY_CHARS)
      refuse(
        `sops.age[${i}].enc is ${entry.enc.length} characters: a data key wrapped for one recipient is at most ${MAX_WRAPPED_KEY_CHARS}`,
      );
    return { recipient: entry.recipient, enc: entry.enc };
  });
  if (stanzas.length === 0) {
    const others = OTHER_KEY_TYPES.filter((k) => Array.isArray(raw[k]) && raw[k].length > 0);
    refuse(
      others.length > 0
        ? `it is encrypted for ${others.join(', ')} only: Janus decrypts with age keys (add an age recipient with sops updatekeys)`
        : 'the sops metadata has no age recipient',
    );
  }
  const mac = typeof raw.mac === 'string' ? raw.mac : refuse('the sops metadata has no mac');
  const macValue = parseEncryptedValue(mac);
  if (typeof macValue === 'string') refuse(`sops.mac ${macValue}`);
  const lastModified =
    typeof raw.lastmodified === 'string' ? raw.lastmodified : refuse('the sops metadata has no lastmodified');
  const macOnlyEncrypted = raw.mac_only_encrypted === true;
  return { age: stanzas, mac, lastModified, macOnlyEncrypted, isEncrypted: selection(raw, refuse) };
}

/** sops's shouldBeEncrypted, for the options it reads from the metadata (each optional). */
function selection(
  raw: Record<string, unknown>,
  refuse: (reason: string) => never,
): (path: readonly string[]) => boolean {
  const text = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === '') return undefined;
    return typeof v === 'string' ? v : refuse(`sops.${key} is not a string`);
  };
  // Read as sops (Go's regexp) reads them, and matched in linear time: a pushed file's regex run
  // by V8's backtracking engine could hold the event loop for hours (selection-regex.ts).
  const budget = new MatchBudget();
  const regex = (key: string): ((k: string) => boolean) | undefined => {
    const source = text(key);
    if (source === undefined) return undefined;
    const compiled = compileSelectionRegex(source, budget);
    if (typeof compiled !== 'function') return refuse(`sops.${key} ${compiled.refused}`);
    return (k) => {
      try {
        return compiled(k);
      } catch (e) {
        if (e instanceof SelectionRegexError) return refuse(`sops.${key} ${e.message}`);
        throw e;
      }
    };
  };
  const unencryptedSuffix = text('unencrypted_suffix');
  const encryptedSuffix = text('encrypted_suffix');
  const unencryptedRegex = regex('unencrypted_regex');
  const encryptedRegex = regex('encrypted_regex');
  return (path) => {
    let encrypted = true;
    if (unencryptedSuffix !== undefined && path.some((k) => k.endsWith(unencryptedSuffix))) encrypted = false;
    if (encryptedSuffix !== undefined) encrypted = path.some((k) => k.endsWith(encryptedSuffix));
    if (unencryptedRegex !== undefined && path.some((k) => unencryptedRegex(k))) encrypted = false;
    if (encryptedRegex !== undefined) encrypted = path.some((k) => encryptedRegex(k));
    return encrypted;
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
