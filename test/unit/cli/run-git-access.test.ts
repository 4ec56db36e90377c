/**
 * `janus run`'s Git access settings: credentials never over plain http:// unless allowed, the
 * fetch cap, and the webhook's own listener; each problem a UsageError naming its flag.
 */
import { describe, expect, it } from 'vitest';
import { parse, UsageError } from '../../../src/cli/command.ts';
import run from '../../../src/cli/commands/run.ts';
import { gitSettings } from '../../../src/cli/run-settings.ts';

const settings = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  gitSettings(parse(run, ['--controller-namespace', 'janus-system', ...argv], env).values, env);

const usageError = (argv: string[], env: NodeJS.ProcessEnv = {}): UsageError => {
  try {
    settings(argv, env);
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
};

const HTTP = 'http://git.internal/org/deploys.git';

describe('janus run: credentials and plain http://', () => {
  it('refuses credentials for an http:// repository, from a file or the environment', () => {
    const fromFile = usageError(['--repo', HTTP, '--git-token-file', '/run/token']);
    expect(fromFile.message).toBe(
      `--repo ${HTTP} is plain http:// and Git credentials are configured (file /run/token): they would cross the network in clear text. Use https://, or pass --allow-insecure-http (JANUS_ALLOW_INSECURE_HTTP=true) on a network you trust`,
    );
    expect(usageError(['--repo', 'HTTP://git.internal/x.git'], { JANUS_GIT_TOKEN: 't' }).message).toContain(
      'environment variable JANUS_GIT_TOKEN',
    );
  });

  it('allows them with --allow-insecure-http or its variable, and says so', () => {
    expect(settings(['--repo', HTTP, '--git-token-file', '/t', '--allow-insecure-http']).insecureHttp).toBe(
      true,
    );
    expect(
      settings(['--repo', HTTP], { JANUS_GIT_TOKEN: 't', JANUS_ALLOW_INSECURE_HTTP: 'true' }).insecureHttp,
    ).toBe(true);
  });

  it('has nothing to say about https://, local paths, or http:// without credentials', () => {
    expect(settings(['--repo', 'https://git.example.com/x.git', '--git-token-file', '/t']).insecureHttp).toBe(
      false,
    );
    expect(settings(['--repo', '/srv/deploys', '--git-token-file', '/t']).insecureHttp).toBe(false);
    expect(settings(['--repo', HTTP]).insecureHttp).toBe(false);
  });
});

describe('janus run: --max-fetch-bytes', () => {
  it('defaults to 64 MiB and reads sizes with binary suffixes; 0 is no limit', () => {
    const bytes = (value?: string, env: NodeJS.ProcessEnv = {}) =>
      settings(['--repo', HTTP, ...(value === undefined ? [] : ['--max-fetch-bytes', value])], env)
        .maxFetchBytes;
    expect(bytes()).toBe(64 * 1024 * 1024);
    expect(bytes('256Mi')).toBe(256 * 1024 * 1024);
    expect(bytes('1GiB')).toBe(1024 ** 3);
    expect(bytes('512ki')).toBe(512 * 1024);
    expect(bytes('1000')).toBe(1000);
    expect(bytes('0')).toBe(0);
    expect(bytes(undefined, { JANUS_MAX_FETCH_BYTES: '8Mi' })).toBe(8 * 1024 * 1024);
  });

  it('refuses anything else, naming the flag', () => {
    for (const value of ['64MB', '-1', '1.5Gi', 'lots', '']) {
      expect(usageError(['--repo', HTTP, `--max-fetch-bytes=${value}`]).message).toMatch(
        /^--max-fetch-bytes: /,
      );
    }
  });
});

describe('janus run: --webhook-bind-address', () => {
  it('is unset by default: the webhook stays on the metrics listener', () => {
    expect(settings(['--repo', HTTP]).webhookBindAddress).toBeUndefined();
  });

  it('takes host:port when a webhook secret is configured', () => {
    const env = { JANUS_WEBHOOK_SECRET: 's', JANUS_WEBHOOK_BIND_ADDRESS: ':9443' };
    expect(settings(['--repo', HTTP], env).webhookBindAddress).toBe(':9443');
  });

  it('refuses it without a webhook secret, or without a port', () => {
    expect(usageError(['--repo', HTTP, '--webhook-bind-address', ':9443']).message).toMatch(
      /^--webhook-bind-address needs a webhook secret/,
    );
    const env = { JANUS_WEBHOOK_SECRET: 's' };
    expect(usageError(['--repo', HTTP, '--webhook-bind-address', '0'], env).message).toMatch(
      /^--webhook-bind-address: expected host:port/,
    );
    expect(usageError(['--repo', HTTP, '--webhook-bind-address', 'localhost'], env).message).toBe(
      '--webhook-bind-address: expected host:port or :port, got "localhost"',
    );
  });
});
