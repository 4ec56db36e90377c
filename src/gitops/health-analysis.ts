/**
 * spec.health.analysis in transaction.yaml: a list of at most 8 items, each a templateRef (with
 * args) or an inline check, and only with a bake window to measure them in. Each item's own
 * fields are the CRD's to check (the API server refuses a Transaction whose item is malformed,
 * naming the field); here the shape and the rule that ties analysis to stableFor.
 */
import { type AnalysisRef, MAX_HEALTH_ANALYSIS } from '../api/v1alpha1/index.ts';
import { describeType, type FieldReporter } from './fields.ts';
import { parseDuration } from './names.ts';

export function checkAnalysis(
  r: FieldReporter,
  value: unknown,
  path: string[],
  stableFor: string | undefined,
): AnalysisRef[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    r.report('invalid-value', path, `must be a list, found ${describeType(value)}`);
    return undefined;
  }
  if (value.length > MAX_HEALTH_ANALYSIS) {
    r.report('invalid-value', path, `must have at most ${MAX_HEALTH_ANALYSIS} items, found ${value.length}`);
    return undefined;
  }
  const items: AnalysisRef[] = [];
  value.forEach((item, i) => {
    const fields = r.mapping(item, [...path, String(i)]);
    if (!fields) return;
    r.onlyKnownFields(fields, ['templateRef', 'args', 'check'], [...path, String(i)]);
    if ((fields.templateRef === undefined) === (fields.check === undefined)) {
      r.report(
        'invalid-value',
        [...path, String(i)],
        'an analysis item has exactly one of templateRef or check',
      );
      return;
    }
    items.push(fields as AnalysisRef);
  });
  if (items.length > 0 && (parseDuration(stableFor ?? '0s') ?? 0) <= 0) {
    r.report(
      'invalid-value',
      path,
      'needs spec.health.stableFor > 0s: the checks are measured during the bake window',
    );
    return undefined;
  }
  return items.length === value.length ? items : undefined;
}
