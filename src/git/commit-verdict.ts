/**
 * Whether a commit is signed by an allowed signer, and if not, why, in words a person can act
 * on. Pure: the commit, the allowed signers and the clock in, a verdict out. Shared by the poller
 * (--verify-signatures) and anything else that checks commits against an allowed-signers file.
 */
import { createHash } from 'node:crypto';
import { type AllowedSigner, type AllowedSigners, matchesPattern } from './allowed-signers.ts';
import type { SignedCommit } from './commit-signature.ts';
import { isSshSignature, parseSshSignature, type SshSignature, verifySshSignature } from './sshsig.ts';

/** The sshsig namespace git signs commits in. */
export const GIT_SIGNATURE_NAMESPACE = 'git';

export type SignatureProblem =
  | 'unsigned'
  | 'openpgp'
  | 'malformed'
  | 'unsupported-key'
  | 'wrong-namespace'
  | 'bad-signature'
  | 'unknown-key'
  | 'expired'
  | 'not-yet-valid';

export type CommitVerdict =
  | { ok: true; principals: string[]; keyType: string }
  | { ok: false; problem: SignatureProblem; message: string };

/**
 * What the signature alone says, before any allowed-signers file is read: the costly part
 * (the cryptography), and the same for a commit id forever, so callers cache it by oid.
 */
export type SignatureCheck =
  | { ok: true; key: Buffer; keyType: string; fingerprint: string; committedAt: number }
  | { ok: false; problem: SignatureProblem; message: string };

const PGP = '-----BEGIN PGP SIGNATURE-----';

/** Whether the commit carries a valid SSH signature over itself, in namespace "git", by some key. */
export function checkSignature(commit: SignedCommit): SignatureCheck {
  const armored = commit.signature;
  if (armored === undefined) return refuse('unsigned', 'the commit is not signed');
  if (armored.trimStart().startsWith(PGP))
    return refuse('openpgp', 'OpenPGP signatures are not verified; sign with SSH (gpg.format=ssh)');
  if (!isSshSignature(armored)) return refuse('malformed', 'the signature is neither SSH nor OpenPGP');
  let sig: SshSignature;
  try {
    sig = parseSshSignature(armored);
  } catch (error) {
    return refuse('malformed', `the SSH signature is malformed: ${(error as Error).message}`);
  }
  if (sig.publicKey.key === undefined)
    return refuse('unsupported-key', `keys of type ${sig.publicKey.type} are not verified by Janus`);
  if (sig.namespace !== GIT_SIGNATURE_NAMESPACE)
    return refuse('wrong-namespace', `signed for namespace "${sig.namespace}", not "git"`);
  if (!verifySshSignature(sig, commit.payload))
    return refuse(
      'bad-signature',
      `bad signature (${sig.publicKey.type} key): the commit is not what was signed`,
    );
  return {
    ok: true,
    key: sig.publicKey.blob,
    keyType: sig.publicKey.type,
    fingerprint: fingerprint(sig),
    committedAt: commit.committedAt,
  };
}

/**
 * Whether the key of a valid signature is an allowed signer for git at the commit's date.
 * `now` (ms) as well as the commit's own time: git checks valid-before at the committer date,
 * which whoever writes the commit chooses; an expired key must not sign a backdated commit.
 */
export function authorizeSignature(
  check: SignatureCheck,
  allowed: AllowedSigners,
  now: number,
): CommitVerdict {
  if (!check.ok) return check;
  const lines = allowed.signers.filter((s) => s.key.blob.equals(check.key));
  const usable = lines.filter((s) => namespaceAllowed(s));
  if (usable.length === 0) {
    return lines.length === 0
      ? refuse('unknown-key', `signed by a key not in the allowed signers (${check.fingerprint})`)
      : refuse(
          'unknown-key',
          `the allowed signers do not let key ${check.fingerprint} sign in namespace "git"`,
        );
  }
  const at = check.committedAt * 1000;
  const valid = usable.filter((s) => (s.validAfter ?? -Infinity) <= at);
  if (valid.length === 0)
    return refuse('not-yet-valid', `the key is not valid yet at the commit's date (${who(usable)})`);
  const current = valid.filter((s) => (s.validBefore ?? Infinity) > Math.max(at, now));
  if (current.length === 0) return refuse('expired', `the key has expired (valid-before, ${who(valid)})`);
  return {
    ok: true,
    principals: [...new Set(current.flatMap((s) => s.principals))],
    keyType: check.keyType,
  };
}

/** Both steps at once. */
export function verifyCommit(commit: SignedCommit, allowed: AllowedSigners, now: number): CommitVerdict {
  return authorizeSignature(checkSignature(commit), allowed, now);
}

function namespaceAllowed(signer: AllowedSigner): boolean {
  const patterns = signer.namespaces;
  if (patterns === undefined) return true;
  if (patterns.some((p) => p.startsWith('!') && matchesPattern(GIT_SIGNATURE_NAMESPACE, p.slice(1))))
    return false;
  return patterns.some((p) => !p.startsWith('!') && matchesPattern(GIT_SIGNATURE_NAMESPACE, p));
}

function who(signers: AllowedSigner[]): string {
  return signers.map((s) => `${s.principals.join(',')}, line ${s.line}`).join('; ');
}

/** OpenSSH's SHA256 fingerprint, as `ssh-keygen -lf` prints it. */
function fingerprint(sig: SshSignature): string {
  const hash = createHash('sha256').update(sig.publicKey.blob).digest('base64').replace(/=+$/, '');
  return `${sig.publicKey.type} SHA256:${hash}`;
}

function refuse(
  problem: SignatureProblem,
  message: string,
): { ok: false; problem: SignatureProblem; message: string } {
  return { ok: false, problem, message };
}
