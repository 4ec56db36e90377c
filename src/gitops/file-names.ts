/** What each file name in a transaction directory means. */
import type { ChangeType } from '../api/v1alpha1/index.ts';

export const TRANSACTION_FILE = 'transaction.yaml';
export const ROLLBACK_FILE = 'ROLLBACK';

export type FileRole =
  | { role: 'transaction' }
  | { role: 'rollback' }
  /** `sops`: named `<order>-<name>.<type>.sops.yaml`, a SOPS-encrypted manifest. */
  | { role: 'change'; type: ChangeType; sops: boolean }
  | { role: 'unknown'; hint: string };

const CHANGE_FILE = /^(.+)\.(create|update|patch|delete)(\.sops)?\.yaml$/;
const CHANGE_TYPE: Record<string, ChangeType> = {
  create: 'Create',
  update: 'Update',
  patch: 'Patch',
  delete: 'Delete',
};
const NAMING_RULE =
  'files in a transaction directory are transaction.yaml, ROLLBACK, and change files named ' +
  '<order>-<name>.<create|update|patch|delete>.yaml, e.g. 10-config.patch.yaml (.sops.yaml when SOPS-encrypted)';

export function classifyFile(name: string): FileRole {
  if (name === TRANSACTION_FILE) return { role: 'transaction' };
  if (name === ROLLBACK_FILE) return { role: 'rollback' };
  const match = CHANGE_FILE.exec(name);
  const type = match?.[2] === undefined ? undefined : CHANGE_TYPE[match[2]];
  if (type) return { role: 'change', type, sops: match?.[3] !== undefined };
  return { role: 'unknown', hint: hintFor(name) };
}

function hintFor(name: string): string {
  if (name === 'transaction.yml') return 'rename it to transaction.yaml';
  if (name.toUpperCase() === ROLLBACK_FILE) return 'the rollback request file is named ROLLBACK (upper case)';
  const yml = /^(.+)\.(create|update|patch|delete)\.yml$/i.exec(name);
  if (yml) return `rename it to ${yml[1]}.${yml[2]?.toLowerCase()}.yaml`;
  const anyCase = /^(.+)\.(create|update|patch|delete)\.yaml$/i.exec(name);
  if (anyCase) return `the change type is lower case: ${anyCase[1]}.${anyCase[2]?.toLowerCase()}.yaml`;
  return NAMING_RULE;
}
