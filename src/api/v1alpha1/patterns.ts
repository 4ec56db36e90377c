/**
 * The string patterns the v1alpha1 schemas share: in a file of their own so analysis.ts (whose
 * checks spec.health.analysis embeds) and transaction.ts can both use them without a cycle.
 */

/** Go-style durations as accepted by CEL `duration()` and time.ParseDuration: "90s", "5m", "1h30m". */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$';
export const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
