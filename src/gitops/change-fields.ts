/** Rules shared by inline changes and change files: the change type and its content. */
import { CHANGE_TYPES, type ChangeTarget, type ChangeType } from '../api/v1alpha1/index.ts';
import type { FieldPath } from '../yaml/yaml-file.ts';
import { describeType, type FieldReporter, type Fields, isFields } from './fields.ts';

/**
 * The change types a transaction directory may use. Apply is a source's (docs/sources.md): Janus
 * makes those changes from a render, under the source's field manager, never from a directory.
 */
export const DIRECTORY_CHANGE_TYPES = CHANGE_TYPES.filter((t) => t !== 'Apply');

export function checkChangeType(r: FieldReporter, value: unknown, path: FieldPath): ChangeType | undefined {
  const allowed = DIRECTORY_CHANGE_TYPES.join(', ');
  if (value === undefined || value === null) {
    r.report('missing-field', path, `is required: one of ${allowed}`, 'parent');
    return undefined;
  }
  const type = DIRECTORY_CHANGE_TYPES.find((t) => t === value);
  if (type) return type;
  const caseFix =
    typeof value === 'string'
      ? DIRECTORY_CHANGE_TYPES.find((t) => t.toLowerCase() === value.toLowerCase())
      : undefined;
  const apply =
    value === 'Apply' ? ' (Apply changes are made by sources, from a render: docs/sources.md)' : '';
  r.report(
    'invalid-value',
    path,
    `must be one of ${allowed}, found ${describeType(value)}${caseFix ? ` (did you mean ${caseFix}?)` : ''}${apply}`,
  );
  return undefined;
}

export type CheckedContent = { ok: true; content?: Fields } | { ok: false };

/**
 * Content must be absent for Delete and a mapping otherwise; when it carries identifying fields
 * they must agree with the target, or the API server would act on another object than declared.
 */
export function checkContent(
  r: FieldReporter,
  type: ChangeType,
  target: ChangeTarget,
  content: unknown,
  path: FieldPath,
): CheckedContent {
  if (type === 'Delete') {
    if (content === undefined || content === null) return { ok: true };
    r.report(
      'invalid-value',
      path,
      'is forbidden for a Delete change: the target alone says what to delete',
      'key',
    );
    return { ok: false };
  }
  if (content === undefined || content === null) {
    r.report('missing-field', path, `is required for a ${type} change`, 'parent');
    return { ok: false };
  }
  if (!isFields(content)) {
    r.report('invalid-value', path, `must be a mapping (the manifest), found ${describeType(content)}`);
    return { ok: false };
  }
  const meta = isFields(content.metadata) ? content.metadata : {};
  const mismatches: [FieldPath, unknown, string | undefined][] = [
    [[...path, 'apiVersion'], content.apiVersion, target.apiVersion],
    [[...path, 'kind'], content.kind, target.kind],
    [[...path, 'metadata', 'name'], meta.name, target.name],
    [[...path, 'metadata', 'namespace'], meta.namespace, target.namespace],
  ];
  let ok = true;
  for (const [fieldPath, actual, expected] of mismatches) {
    if (actual !== undefined && expected !== undefined && actual !== expected) {
      r.report(
        'invalid-value',
        fieldPath,
        `is ${JSON.stringify(actual)} but the target says ${JSON.stringify(expected)}`,
      );
      ok = false;
    }
  }
  return ok ? { ok: true, content } : { ok: false };
}
