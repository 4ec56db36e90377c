/**
 * A token sent to a plain http:// address crosses the network in clear text: refused unless the
 * operator passed --allow-insecure-http. One rule for every forge API Janus sends a token to.
 */
import { UsageError } from './command.ts';

/** Throws the refusal when `apiBase` is plain http:// and `allowed` is not set; `subject` names the feature. */
export function refusePlainHttpToken(subject: string, apiBase: string, allowed: boolean | undefined): void {
  if (/^http:\/\//i.test(apiBase) && !allowed) {
    throw new UsageError(
      `${subject}: the forge API ${apiBase} is plain http:// and the token would cross the network in clear text. Use https://, or pass --allow-insecure-http on a network you trust`,
    );
  }
}
