/**
 * Takes one measurement of a check: the side-effecting edge of analysis. Never throws for what a
 * check can meet (Prometheus down, a bad query, credentials refused): that is an Error
 * measurement whose message says what to fix, and the verdict counts it as inconclusive.
 */
import type { AnalysisCheck } from '../api/v1alpha1/analysis.ts';
import type { Objects } from '../kube/resources.ts';
import { authorizationHeader, CredentialsError } from './credentials.ts';
import { CheckDefinitionError, parseFailWhen } from './fail-when.ts';
import { AnalysisRequestError, boundedGet, checkUrl } from './http-get.ts';
import { judgeHttpStatus, judgeQueryResult, type Measurement } from './measurement.ts';
import { type AnalysisPolicy, checkAddressRefusal } from './policy.ts';
import { queryPrometheus } from './prometheus-client.ts';

export interface MeasureContext {
  /** The Transaction's namespace: where the credentials' Secrets are. */
  readonly namespace: string;
  /** Objects as the Transaction's ServiceAccount (impersonated), never the controller's own. */
  readonly objects: Objects;
  /** What the platform team allows: an address not allowed is never requested. */
  readonly policy: AnalysisPolicy;
  readonly timeoutMs?: number | undefined;
  readonly maxBytes?: number | undefined;
  readonly now?: (() => Date) | undefined;
  /** Aborts the request: the measurement is no longer wanted (src/controller/measurements.ts). */
  readonly signal?: AbortSignal | undefined;
}

export async function measure(check: AnalysisCheck, ctx: MeasureContext): Promise<Measurement> {
  const at = (ctx.now?.() ?? new Date()).toISOString();
  // The window refuses such a check before it measures (stages/analysis.ts); this is the last
  // line, so that no path to a request skips the allow-list.
  const refusal = checkAddressRefusal(check, ctx.policy, ctx.namespace);
  if (refusal) return { phase: 'Error', at, message: refusal };
  try {
    if (check.prometheus) {
      const { address, query, credentials, failWhen } = check.prometheus;
      parseFailWhen(failWhen); // before any request: a check that cannot judge need not ask
      const authorization = await authorizationHeader(credentials, ctx.namespace, ctx.objects);
      const value = await queryPrometheus(address, query, {
        headers: authorization ? { authorization } : {},
        timeoutMs: ctx.timeoutMs,
        maxBytes: ctx.maxBytes,
        signal: ctx.signal,
      });
      return judgeQueryResult(check, value, at);
    }
    if (check.http) {
      checkUrl(check.http.url);
      const { status } = await boundedGet(check.http.url, {
        timeoutMs: ctx.timeoutMs,
        maxBytes: ctx.maxBytes,
        signal: ctx.signal,
      });
      return judgeHttpStatus(check.http.url, status, at);
    }
    return { phase: 'Error', at, message: `check "${check.name}" has neither prometheus nor http` };
  } catch (e) {
    if (
      e instanceof AnalysisRequestError ||
      e instanceof CredentialsError ||
      e instanceof CheckDefinitionError
    ) {
      return { phase: 'Error', at, message: `check "${check.name}": ${e.message}` };
    }
    throw e;
  }
}
