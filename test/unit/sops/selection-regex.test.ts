/**
 * sops's encrypted_regex / unencrypted_regex come from a pushed file and are matched against every
 * key of it, before any key or policy is looked at (src/sops/selection-regex.ts): read as sops
 * (Go's regexp, RE2) reads them, matched in linear time, the work per document bounded. The
 * regexes users really write keep their meaning.
 */
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { decryptSops } from '../../../src/sops/decrypt.ts';
import { encryptObject } from '../../../src/sops/encrypt.ts';
import {
  compileSelectionRegex,
  MAX_MATCH_WORK,
  MAX_SELECTION_REGEX_CHARS,
  MatchBudget,
} from '../../../src/sops/selection-regex.ts';
import { checkSopsStructure } from '../../../src/sops/structure.ts';
import { escapeRegExp } from '../../../src/text/escape-regexp.ts';

function matcher(source: string): (key: string) => boolean {
  const m = compileSelectionRegex(source, new MatchBudget());
  if (typeof m !== 'function') throw new Error(`refused: ${m.refused}`);
  return m;
}

function refusal(source: string): string {
  const m = compileSelectionRegex(source, new MatchBudget());
  return typeof m === 'function' ? 'accepted' : m.refused;
}

/** Milliseconds `f` takes (a generous bound only: the bug took seconds to hours). */
function elapsed(f: () => void): number {
  const start = performance.now();
  f();
  return performance.now() - start;
}

describe('a selection regex', () => {
  it.each([
    ['^(data|stringData)$', ['data', 'stringData'], ['metadata', 'data2', 'stringdata', 'Data']],
    ['^(password|token)$', ['password', 'token'], ['passwords', 'tokens_', 'apiVersion']],
    ['pass', ['password', 'mypass', 'pass'], ['pas', 'PASS']],
    ['(?i)^pass', ['PASSWORD', 'Pass'], ['mypass']],
    ['^(?i:key)s?$', ['KEYs', 'key'], ['KEYS', 'keyss']],
    ['_(key|secret)$', ['api_key', 'db_secret'], ['api_key2', 'key']],
    ['^[a-z]+[0-9]{2,3}$', ['ab12', 'x999'], ['ab1', 'ab1234', 'AB12']],
    ['^[^.]+\\.crt$', ['tls.crt'], ['tls.key', 'a.b.crt']],
    ['^\\d+\\w*\\s?$', ['1a', '22_ '], ['a1']],
    ['\\bsecret\\b', ['my secret', 'secret'], ['secrets', 'topsecret']],
    ['\\Qa.b\\E$', ['xa.b'], ['axb']],
    ['^(?:spec|data)\\.[-_a-zA-Z]*$', ['spec.x-y_Z', 'data.'], ['spec.1']],
    ['^a.c$', ['abc', 'a-c'], ['a\nc', 'ac']],
    ['(?s)^a.c$', ['a\nc'], ['ac']],
    ['^(a|)$', ['a', ''], ['aa']],
    ['^x*$', ['', 'xxx'], ['xy']],
    ['a{2}', ['aa', 'baab'], ['a', 'aba']],
    ['^\\x41\\x{42}$', ['AB'], ['ab']],
    ['^é+$', ['éé'], ['e']],
    ['^[\\d_-]+$', ['1_-'], ['a']],
    ['^[]a]$', [']', 'a'], ['b']],
    ['^[^\\s.]$', ['x'], [' ', '.']],
    ['(?i)^[a-c]$', ['B'], ['d']],
    ['^\\pL+$', ['abé'], ['a1']],
    ['^[[:alpha:]]+$', ['ab'], ['a1']],
  ])('%s matches as Go reads it', (source, yes, no) => {
    const m = matcher(source);
    for (const key of yes) expect(m(key), `${source} on ${JSON.stringify(key)}`).toBe(true);
    for (const key of no) expect(m(key), `${source} on ${JSON.stringify(key)}`).toBe(false);
  });

  it('reads the encrypted_regex Janus itself writes (escaped field names)', () => {
    const fields = ['data', 'stringData', 'spec', 'weird.key$', 'a|b'];
    const m = matcher(`^(${fields.map(escapeRegExp).join('|')})$`);
    for (const f of fields) expect(m(f)).toBe(true);
    for (const f of ['metadata', 'weirdXkey$', 'a', 'kind']) expect(m(f)).toBe(false);
  });

  it('agrees with a backtracking engine where both read the same syntax', () => {
    const sources = ['^(a|ab)(c|bcd)(d*)$', 'x(y+|z)?w', '[b-d]{1,3}e', '^(?:ab|a)*b$', '(a*)*c'];
    const keys = ['', 'abcd', 'abcdd', 'acd', 'xw', 'xyyw', 'xzw', 'bce', 'dddde', 'abab', 'ababb', 'aaac'];
    for (const source of sources) {
      const ours = matcher(source);
      const theirs = new RegExp(source, 'u');
      for (const key of keys) expect(ours(key), `${source} on ${key}`).toBe(theirs.test(key));
    }
  });

  it.each([
    ['(a)\\1', 'invalid escape sequence'],
    ['(?=a)', 'invalid or unsupported Perl syntax'],
    ['(?<!a)b', 'invalid'],
    ['a{1001}', 'invalid repeat count'],
    ['a**', 'invalid nested repetition operator'],
    ['(a', 'missing closing )'],
    ['a)', 'unexpected )'],
    ['*a', 'missing argument to repetition operator'],
    ['(?:(?:(?:a{100}){10}){10})', 'invalid repeat count'],
    ['a'.repeat(MAX_SELECTION_REGEX_CHARS + 1), `at most ${MAX_SELECTION_REGEX_CHARS}`],
  ])('%s is refused by name', (source, reason) => {
    expect(refusal(source)).toContain(reason);
  });

  it('matches ^(a+)+$ in linear time (V8 backtracks: 3.6 s at 30 characters, x4 per 2 more)', () => {
    const m = matcher('^(a+)+$');
    let result = true;
    expect(elapsed(() => (result = m(`${'a'.repeat(5000)}!`)))).toBeLessThan(2000);
    expect(result).toBe(false);
    expect(m('a'.repeat(40))).toBe(true);
  });

  it(`stops a document's matching past ${MAX_MATCH_WORK} steps (keys × program)`, () => {
    const m = matcher('^(?:a*){300}b$');
    const keys = Array.from({ length: 200 }, (_, i) => `${'a'.repeat(1000)}${i}`);
    expect(() => {
      for (const key of keys) m(key);
    }).toThrow(`more than ${MAX_MATCH_WORK} steps`);
  });
});

/** A sops file of one Secret whose `sops.encrypted_regex` is `regex` and that has `key` in clear. */
async function fileWith(regex: string, key: string, recipient: string): Promise<string> {
  const text = (await encryptObject(
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, data: {} },
    [recipient],
  )) as string;
  const doc = parseDocument(text);
  doc.setIn(['sops', 'encrypted_regex'], regex);
  doc.setIn(['data'], { [key]: 'x' });
  return doc.toString({ lineWidth: 0 });
}

describe('a pushed sops file with a catastrophic encrypted_regex', () => {
  const evil = `${'a'.repeat(34)}!`; // V8's backtracking engine: about a minute

  it('is checked without its key quickly (the offline check before the policy)', async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    const text = await fileWith('^(a+)+$', evil, recipient);
    expect(elapsed(() => checkSopsStructure('evil.sops.yaml', text))).toBeLessThan(5000);
  });

  it('is decrypted (and refused by its MAC) quickly', async () => {
    const identity = await generateIdentity();
    const text = await fileWith('^(a+)+$', evil, await identityToRecipient(identity));
    const start = performance.now();
    await expect(decryptSops('evil.sops.yaml', text, [identity])).rejects.toThrow('MAC');
    expect(performance.now() - start).toBeLessThan(5000);
  });

  it('is refused by name when its regex is one sops cannot read', async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    const text = await fileWith('^(a)\\1$', 'aa', recipient);
    expect(() => checkSopsStructure('evil.sops.yaml', text)).toThrow(
      'evil.sops.yaml: sops.encrypted_regex is not a regular expression sops reads: error parsing regexp: invalid escape sequence',
    );
  });
});
