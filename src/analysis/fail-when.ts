/**
 * A check's failure condition, `result > 0.05`: parsed once, applied to each measured number.
 * Pure. The CRD's pattern refuses anything else at admission but lets a template put an
 * argument in the number; this parser takes the filled condition, and refuses anything else
 * again for checks that did not come through the API server (transaction.yaml).
 */
import { FAIL_WHEN_PATTERN } from '../api/v1alpha1/analysis.ts';

export type Operator = '>' | '>=' | '<' | '<=' | '==' | '!=';

export interface FailWhen {
  readonly operator: Operator;
  readonly threshold: number;
  /** As written, for messages: "result > 0.05". */
  readonly text: string;
}

const PATTERN = new RegExp(FAIL_WHEN_PATTERN);

/** A check that cannot be measured as written: says what to change. */
export class CheckDefinitionError extends Error {
  override readonly name = 'CheckDefinitionError';
}

export function parseFailWhen(text: string): FailWhen {
  if (!PATTERN.test(text)) {
    throw new CheckDefinitionError(
      `failWhen "${text}" is not a condition such as "result > 0.05" (operators > >= < <= == !=)`,
    );
  }
  const [, operator, threshold] = text.split(' ') as [string, Operator, string];
  return { operator, threshold: Number(threshold), text };
}

/** Whether a measured value meets the failure condition. NaN never does: it is no data. */
export function failsWhen(condition: FailWhen, value: number): boolean {
  const t = condition.threshold;
  switch (condition.operator) {
    case '>':
      return value > t;
    case '>=':
      return value >= t;
    case '<':
      return value < t;
    case '<=':
      return value <= t;
    case '==':
      return value === t;
    case '!=':
      return value !== t;
  }
}
