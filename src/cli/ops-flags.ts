/** The operations listener's flag, shared by the long-running commands (controller, run). */
import type { BindAddress } from '../manager/options.ts';
import { type Flags, UsageError } from './command.ts';

export const OPS_FLAGS = {
  'metrics-bind-address': {
    type: 'string',
    env: 'JANUS_METRICS_BIND_ADDRESS',
    default: ':8080',
    placeholder: 'host:port',
    description:
      'where /metrics, /healthz, /readyz (and /webhook for janus run, unless --webhook-bind-address) are served; "0" turns it off',
  },
} as const satisfies Flags;

/** `host:port` or `:port` (all interfaces); undefined for "0" (off). */
export function parseBindAddress(value: string, flag = 'metrics-bind-address'): BindAddress | undefined {
  if (value === '0') return undefined;
  const match = /^(.*):(\d+)$/.exec(value);
  if (!match) throw new UsageError(`--${flag}: expected host:port or :port, got "${value}"`);
  const port = Number(match[2]);
  if (port > 65535) throw new UsageError(`--${flag}: port ${port} is out of range`);
  return { host: match[1] || '0.0.0.0', port };
}
