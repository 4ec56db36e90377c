/** A change together with where it was written, so later checks (duplicates, policy) can point back at it. */
import type { Change } from '../api/v1alpha1/index.ts';
import type { DiagnosticCode } from '../yaml/diagnostic.ts';

export interface LocatedChange {
  change: Change;
  /** "transactions/x/10-web.patch.yaml document 2" or "transactions/x/transaction.yaml spec.changes[0]". */
  origin: string;
  /**
   * Reports a problem at this change's target: at its name, or at its namespace field (which
   * must then be written explicitly).
   */
  report(code: DiagnosticCode, message: string, field?: 'name' | 'namespace'): void;
}
