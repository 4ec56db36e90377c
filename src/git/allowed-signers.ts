/**
 * git's allowed-signers file (gpg.ssh.allowedSignersFile; `man ssh-keygen`, ALLOWED SIGNERS):
 * one key a line, `principals [options] keytype base64-key [comment]`, with the options
 * `namespaces="git,…"`, `valid-after="YYYYMMDD[HHMM[SS]][Z]"`, `valid-before=…` and
 * `cert-authority`. The same file works with `git verify-commit`, so a team checks by hand what
 * Janus checks. Lines Janus cannot use (a certificate authority, an unknown key type, an unknown
 * option) are reported, not guessed at: ssh-keygen refuses them too.
 */
import { parsePublicKey, type SshPublicKey } from './ssh-wire.ts';

export interface AllowedSigner {
  /** 1-based line in the file, for messages. */
  line: number;
  /** The principals as written (patterns such as *@example.com stay patterns). */
  principals: string[];
  /** Patterns of the signature namespaces this key may sign; undefined: any. */
  namespaces: string[] | undefined;
  /** Milliseconds since the epoch. */
  validAfter: number | undefined;
  validBefore: number | undefined;
  key: SshPublicKey;
}

export interface AllowedSigners {
  signers: AllowedSigner[];
  /** Lines skipped, each with why. */
  problems: string[];
}

export function parseAllowedSigners(text: string): AllowedSigners {
  const signers: AllowedSigner[] = [];
  const problems: string[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    try {
      signers.push(parseLine(line, index + 1));
    } catch (error) {
      problems.push(`line ${index + 1}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { signers, problems };
}

const KEY_TYPE = /^(ssh-|ecdsa-sha2-|sk-ssh-|sk-ecdsa-)/;

function parseLine(line: string, number: number): AllowedSigner {
  const tokens = tokenize(line);
  const principals = unquote(tokens.shift() ?? '');
  let options: string | undefined;
  if (tokens[0] !== undefined && !KEY_TYPE.test(tokens[0])) options = tokens.shift();
  const [type, base64] = tokens;
  if (type === undefined || base64 === undefined)
    throw new Error('expected principals, options, key type and key');
  const key = parsePublicKey(Buffer.from(base64, 'base64'));
  if (key.type !== type) throw new Error(`the key is of type ${key.type}, the line says ${type}`);
  if (key.key === undefined) throw new Error(`key type ${type} is not verified by Janus`);
  const signer: AllowedSigner = {
    line: number,
    principals: principals.split(',').filter((p) => p !== ''),
    namespaces: undefined,
    validAfter: undefined,
    validBefore: undefined,
    key,
  };
  for (const option of splitOptions(options ?? '')) applyOption(signer, option);
  if (signer.principals.length === 0) throw new Error('no principal');
  return signer;
}

function applyOption(signer: AllowedSigner, option: string): void {
  const eq = option.indexOf('=');
  const name = (eq < 0 ? option : option.slice(0, eq)).toLowerCase();
  const value = eq < 0 ? undefined : unquote(option.slice(eq + 1));
  if (name === 'cert-authority') throw new Error('certificate authorities are not supported by Janus');
  if (value === undefined) throw new Error(`option ${name} needs a value`);
  if (name === 'namespaces') signer.namespaces = value.split(',');
  else if (name === 'valid-after') signer.validAfter = parseSshTime(value);
  else if (name === 'valid-before') signer.validBefore = parseSshTime(value);
  else throw new Error(`unknown option ${name}`);
}

/** ssh-keygen's absolute time: YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS; local time unless it ends in Z. */
export function parseSshTime(value: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?(Z?)$/i.exec(value);
  if (!match) throw new Error(`invalid time "${value}" (YYYYMMDD[HHMM[SS]][Z])`);
  const [y, mo, d, h, mi, s] = match.slice(1, 7).map((part) => Number(part ?? 0)) as number[];
  const parts = [y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, s ?? 0] as const;
  return match[7] ? Date.UTC(...parts) : new Date(...parts).getTime();
}

/** Splits on whitespace outside double quotes, dropping empty parts. */
function tokenize(line: string): string[] {
  return splitOutsideQuotes(line, (c) => /\s/.test(c)).filter((t) => t !== '');
}

/** Splits options on commas outside double quotes. */
function splitOptions(options: string): string[] {
  return options === '' ? [] : splitOutsideQuotes(options, (c) => c === ',');
}

function splitOutsideQuotes(text: string, separates: (char: string) => boolean): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    if (!quoted && separates(char)) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** A glob of ssh's match_pattern: `*` any run, `?` one character. */
export function matchesPattern(value: string, pattern: string): boolean {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`).test(value);
}
