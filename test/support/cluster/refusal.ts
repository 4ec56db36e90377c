/** What the API server answered to a request a test expects it to refuse. */
import { KubeApiError } from '../../../src/kube/errors.ts';

/** The refusal of `attempt`; throws when it was allowed, or failed otherwise. */
export async function refusal(attempt: Promise<unknown>): Promise<KubeApiError> {
  try {
    await attempt;
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
  throw new Error('the request was allowed');
}
