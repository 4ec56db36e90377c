/**
 * A controller that cannot run never looks healthy: every flag and environment variable is
 * checked before anything starts, and a bad one ends the process with exit status 2 and a
 * message naming it, with no operations server left answering /healthz.
 */
import { describe, expect, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import { janus } from '../../support/processes/cli.ts';

const clients = useClients();

describe('janus controller with settings it cannot run with', () => {
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    [
      'a lease duration not above the renew deadline',
      ['--leader-lease-duration', '5s', '--leader-renew-deadline', '10s'],
      {},
      /--leader-lease-duration 5s: must exceed the renew deadline/,
    ],
    [
      'an unparsable duration from the environment',
      [],
      { JANUS_LEADER_RENEW_DEADLINE: '10 seconds' },
      /--leader-renew-deadline/,
    ],
    [
      'a renew deadline within the retry period',
      ['--leader-renew-deadline', '2s', '--leader-retry-period', '2s'],
      {},
      /--leader-renew-deadline 2s: must exceed 1.2 × the retry period/,
    ],
    ['a concurrency of zero', ['--concurrency', '0'], {}, /--concurrency/],
    ['an unknown log level', ['--log-level', 'verbose'], {}, /--log-level: unknown level "verbose"/],
  ];
  for (const [what, args, env, message] of cases) {
    it(`exits 2 at once on ${what}`, async () => {
      // An installation of its own: were a bad setting ever let through, the process would still
      // touch none of the shared cluster's Transactions.
      const own = ['--instance', 'bad-settings-test'];
      const result = await janus(['controller', '--metrics-bind-address', '127.0.0.1:0', ...own, ...args], {
        kubeconfig: clients.kubeconfigs.controller,
        env,
      });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(result.code).toBe(2);
    });
  }
});
