/** janus controller and janus run map their flags to the manager's options, checked first. */

import { describe, expect, it } from 'vitest';
import { timeoutFor } from '../../../src/analysis/index.ts';
import { parse, UsageError } from '../../../src/cli/command.ts';
import controller from '../../../src/cli/commands/controller.ts';
import { managerOptions } from '../../../src/cli/controller-settings.ts';
import { VERSION } from '../../../src/version.ts';

const options = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  managerOptions(
    parse(controller, ['--controller-namespace', 'janus-system', ...argv], env).values,
    'janus-controller',
  );

describe('managerOptions', () => {
  it('reads the defaults: leader election on the janus-controller Lease, ops on :8080', () => {
    const o = options([]);

    expect(o.leaderElection).toEqual({
      enabled: true,
      leaseName: 'janus-controller',
      timings: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    });
    expect(o.opsAddress).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(o.kube.userAgent).toBe(`janus-controller/${VERSION}`);
    expect(o).toMatchObject({ controllerNamespace: 'janus-system', concurrency: 16, instance: undefined });
    expect(o.git).toBeUndefined();
  });

  it('names the Lease after the instance, unless --leader-election-id names it', () => {
    expect(options(['--instance', 'blue']).leaderElection.leaseName).toBe('janus-controller-blue');
    expect(options(['--instance', 'blue', '--leader-election-id', 'mine']).leaderElection.leaseName).toBe(
      'mine',
    );
  });

  it('turns leader election and the ops server off by flag or environment', () => {
    expect(options(['--no-leader-elect']).leaderElection.enabled).toBe(false);
    expect(options([], { JANUS_LEADER_ELECT: 'false' }).leaderElection.enabled).toBe(false);
    expect(options(['--metrics-bind-address', '0']).opsAddress).toBeUndefined();
  });

  it('refuses a bad flag with a usage error naming it', () => {
    const refused = (argv: string[]) => {
      try {
        options(argv);
      } catch (e) {
        if (e instanceof UsageError) return e.message;
        throw e;
      }
      throw new Error(`accepted: ${argv.join(' ')}`);
    };

    expect(refused(['--metrics-bind-address', 'localhost'])).toBe(
      '--metrics-bind-address: expected host:port or :port, got "localhost"',
    );
    expect(refused(['--concurrency', '0'])).toBe('--concurrency: expected a positive whole number, got "0"');
    expect(refused(['--log-level', 'loud'])).toBe('--log-level: unknown level "loud"');
  });

  it("allows metric analysis no address by default, and templates of the controller's namespace only", () => {
    expect(options([]).analysis).toEqual({
      allowedAddresses: [],
      templateNamespaces: ['janus-system'],
      timeouts: { defaultMs: 10_000, namespaces: [] },
    });
  });

  it('reads addresses and timeouts for some namespaces, an entry without a glob being for every one', () => {
    const o = options([
      '--analysis-allowed-addresses',
      'team-a=http://prom-a:9090,team-b-*=http://prom-b:9090, http://thanos:9090',
      '--analysis-timeout',
      '20s, team-a=3s, team-*=5s',
    ]);
    expect(o.analysis.allowedAddresses.map((a) => [a.namespaces, a.text])).toEqual([
      ['team-a', 'http://prom-a:9090'],
      ['team-b-*', 'http://prom-b:9090'],
      [undefined, 'http://thanos:9090'],
    ]);
    // The first entry that matches a namespace is its: team-a 3s, team-b 5s, the rest 20s.
    expect(['team-a', 'team-b', 'shop'].map((ns) => timeoutFor(o.analysis, ns))).toEqual([
      3_000, 5_000, 20_000,
    ]);
    expect(() => options(['--analysis-timeout', 'Team=3s'])).toThrow(
      '--analysis-timeout: "Team=3s": "Team" is not a namespace or a glob of namespaces',
    );
    expect(() => options(['--analysis-timeout', 'team-a=20m'])).toThrow(
      '--analysis-timeout: must be from 1s to 10m, got "team-a=20m"',
    );
    expect(() => options(['--analysis-allowed-addresses', 'Team_A=http://prom-a:9090'])).toThrow(
      /^--analysis-allowed-addresses: "Team_A=http:\/\/prom-a:9090" is not an address prefix/,
    );
  });

  it('reads the analysis allow-lists from flags or environment; the controller namespace stays allowed', () => {
    const o = options(
      ['--analysis-allowed-addresses', 'http://prometheus.monitoring:9090, https://gw.example/prom'],
      {
        JANUS_ANALYSIS_TEMPLATE_NAMESPACES: 'platform-analysis,janus-system',
      },
    );
    expect(o.analysis.allowedAddresses.map((a) => a.text)).toEqual([
      'http://prometheus.monitoring:9090',
      'https://gw.example/prom',
    ]);
    expect(o.analysis.templateNamespaces).toEqual(['janus-system', 'platform-analysis']);
  });

  it('sends no notifications by default; --notifications-config or its variable names the file', () => {
    expect(options([]).notificationsConfig).toBeUndefined();
    expect(options(['--notifications-config', '/etc/n.yaml']).notificationsConfig).toBe('/etc/n.yaml');
    expect(options([], { JANUS_NOTIFICATIONS_CONFIG: '/etc/e.yaml' }).notificationsConfig).toBe(
      '/etc/e.yaml',
    );
  });

  it('refuses an analysis setting that is not an address prefix or a namespace, naming the flag', () => {
    expect(() => options(['--analysis-allowed-addresses', 'prometheus.monitoring:9090'])).toThrow(UsageError);
    expect(() => options(['--analysis-allowed-addresses', 'http://u:p@prom'])).toThrow(
      /^--analysis-allowed-addresses: "http:\/\/u:p@prom" is not an address prefix/,
    );
    expect(() => options(['--analysis-template-namespaces', 'Platform'])).toThrow(
      '--analysis-template-namespaces: "Platform" is not a namespace name',
    );
  });
});
