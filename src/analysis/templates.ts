/**
 * From a Transaction's analysis item to the checks it runs: an inline check as is, or a
 * template's checks with its {{args.name}} filled from the reference's args and the template's
 * defaults. Pure; reading the AnalysisTemplate is template-reader.ts's.
 */
import type { AnalysisCheck, AnalysisRef, AnalysisTemplateSpec } from '../api/v1alpha1/analysis.ts';

const PLACEHOLDER = /\{\{\s*args\.([a-zA-Z][a-zA-Z0-9_-]*)\s*\}\}/g;

/** An analysis item names a template that cannot be used as given: says which and why. */
export class AnalysisTemplateError extends Error {
  override readonly name = 'AnalysisTemplateError';
}

export function templateName(ref: AnalysisRef, transactionNamespace: string): string {
  return `AnalysisTemplate "${ref.templateRef?.namespace ?? transactionNamespace}/${ref.templateRef?.name}"`;
}

export function checksOf(
  ref: AnalysisRef,
  template: AnalysisTemplateSpec | undefined,
  transactionNamespace: string,
): AnalysisCheck[] {
  if (ref.check) return [ref.check];
  if (!template) throw new AnalysisTemplateError('an analysis item has neither a check nor a template');
  const where = templateName(ref, transactionNamespace);
  const values = new Map<string, string>();
  for (const arg of template.args ?? []) if (arg.value !== undefined) values.set(arg.name, arg.value);
  const declared = new Set((template.args ?? []).map((a) => a.name));
  for (const arg of ref.args ?? []) {
    if (!declared.has(arg.name)) throw new AnalysisTemplateError(`${where} has no argument "${arg.name}"`);
    values.set(arg.name, arg.value);
  }
  const missing = [...declared].filter((name) => !values.has(name));
  if (missing.length > 0) {
    throw new AnalysisTemplateError(`${where} needs a value for ${missing.map((n) => `"${n}"`).join(', ')}`);
  }
  return template.checks.map((check) => fill(check, values, where));
}

/** Fills the placeholders of every string in the check; an undeclared one is an error. */
function fill(check: AnalysisCheck, values: ReadonlyMap<string, string>, where: string): AnalysisCheck {
  const replace = (text: string) =>
    text.replace(PLACEHOLDER, (_, name: string) => {
      const value = values.get(name);
      if (value === undefined) {
        throw new AnalysisTemplateError(
          `${where}: check "${check.name}" uses {{args.${name}}}, which it does not declare`,
        );
      }
      return value;
    });
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return replace(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    }
    return value;
  };
  return walk(check) as AnalysisCheck;
}
