/**
 * The kinds SOPS-encrypted content may be applied to. Applied, the content is in clear in the
 * target, for everyone who may read the target: a Secret, which the stock `view` role never
 * reads, and only the other kinds a platform team allows (--sops-kinds), since it alone knows
 * who reads them on its cluster. A kind the built-in `view` role reads is never allowed. A custom
 * resource whose ClusterRole is aggregated into `view` is readable by every viewer too; the
 * controller also refuses a kind the cluster's live `view` ClusterRole reads, whatever this list
 * says (src/controller/view-role.ts). Pure.
 */
import { splitApiVersion } from '../kube/resources.ts';
import { viewMayRead } from '../rollback-store/view-readable.ts';

export const SOPS_KINDS_SETTING = '--sops-kinds, JANUS_SOPS_KINDS';

/** Always allowed; the setting adds to it. */
const SECRET = '/Secret';

/** An entry of --sops-kinds that cannot be allowed; names it. */
export class SopsKindsError extends Error {
  override readonly name = 'SopsKindsError';
}

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * `Kind` (the core group) or `Kind.group` entries, comma-separated, as "group/Kind" keys;
 * unset or empty: none beyond Secret. Throws SopsKindsError.
 */
export function parseSopsKinds(list: string | readonly string[] | undefined): string[] {
  const entries = (typeof list === 'string' ? list.split(',') : (list ?? []))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return [...new Set(entries.map(parseEntry))];
}

function parseEntry(entry: string): string {
  const dot = entry.indexOf('.');
  const kind = dot < 0 ? entry : entry.slice(0, dot);
  const group = dot < 0 ? '' : entry.slice(dot + 1);
  if (!KIND.test(kind) || (group !== '' && (!GROUP.test(group) || group.length > 253))) {
    throw new SopsKindsError(
      `${JSON.stringify(entry)} is not a kind: write Kind for the core group, Kind.group otherwise (e.g. Database.db.example.com); no wildcard`,
    );
  }
  if (viewMayRead(group === '' ? 'v1' : `${group}/v1`, kind)) {
    throw new SopsKindsError(
      `${JSON.stringify(entry)} is readable by everyone the built-in view role lets read a namespace: its decrypted content would be in clear to them, so it is never allowed`,
    );
  }
  return `${group}/${kind}`;
}

/** "Secret", "Database.db.example.com": a kind as the setting names it. */
export function kindName(apiVersion: string, kind: string): string {
  const group = groupOfApiVersion(apiVersion);
  return group === '' ? kind : `${kind}.${group}`;
}

/** The kinds SOPS content may be applied to, as the setting names them: Secret first. */
export function sopsKindNames(allowed: readonly string[]): string[] {
  return ['Secret', ...allowed.map(nameOfKey)];
}

/** Why SOPS content may not be applied to this kind, or undefined when it may. */
export function sopsKindRefusal(
  apiVersion: string,
  kind: string,
  allowed: readonly string[],
): string | undefined {
  const key = `${groupOfApiVersion(apiVersion)}/${kind}`;
  if (key === SECRET || allowed.includes(key)) return undefined;
  const others = allowed.length === 0 ? 'no other kind' : sopsKindNames(allowed).slice(1).join(', ');
  return `SOPS-encrypted content is applied only to Secrets and the kinds the platform team allows (${SOPS_KINDS_SETTING}: ${others}), not to a ${kindName(apiVersion, kind)}: whoever may read one reads its decrypted content in clear. Encrypt a Secret and reference it`;
}

function nameOfKey(key: string): string {
  const slash = key.indexOf('/');
  const group = key.slice(0, slash);
  const kind = key.slice(slash + 1);
  return group === '' ? kind : `${kind}.${group}`;
}

const groupOfApiVersion = (apiVersion: string): string => splitApiVersion(apiVersion).group;
