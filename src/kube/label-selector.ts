/**
 * A workload's `spec.selector` (metav1.LabelSelector): as the query string the API server takes,
 * and matched locally, with the same meaning, against an object's labels (the health gate keeps
 * one watch per kind and namespace and picks each workload's pods out of it itself).
 */
import type { KubeObject } from './resources.ts';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** The object's spec.selector, or undefined when it has none (or one that selects nothing). */
export function selectorOf(obj: KubeObject): LabelSelector | undefined {
  const selector = (obj as { spec?: { selector?: unknown } }).spec?.selector;
  if (!selector || typeof selector !== 'object') return undefined;
  const { matchLabels, matchExpressions } = selector as LabelSelector;
  const empty = Object.keys(matchLabels ?? {}).length === 0 && (matchExpressions ?? []).length === 0;
  // An empty selector would select everything; workloads' APIs refuse one, so treat it as none.
  return empty ? undefined : (selector as LabelSelector);
}

/** The selector as a query string, e.g. "app=web,tier in (a,b)". */
export function selectorString(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** Whether the selector selects these labels (apimachinery's LabelSelectorAsSelector semantics). */
export function selects(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const has = (key: string) => labels !== undefined && Object.hasOwn(labels, key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (!has(key) || labels?.[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const values = e.values ?? [];
    const value = labels?.[e.key];
    if (e.operator === 'In' && !(has(e.key) && values.includes(value as string))) return false;
    if (e.operator === 'NotIn' && has(e.key) && values.includes(value as string)) return false;
    if (e.operator === 'Exists' && !has(e.key)) return false;
    if (e.operator === 'DoesNotExist' && has(e.key)) return false;
    // An unknown operator: the API server refuses such a selector, so it selects nothing.
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) return false;
  }
  return true;
}
