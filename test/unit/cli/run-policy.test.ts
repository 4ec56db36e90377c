/** `janus run` reads the repository's policy from its flags, safe by default, refusing reserved namespaces. */
import { describe, expect, it } from 'vitest';
import { parse, UsageError } from '../../../src/cli/command.ts';
import run from '../../../src/cli/commands/run.ts';
import { gitSettings } from '../../../src/cli/run-settings.ts';

const settings = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  gitSettings(
    parse(run, ['--repo', '/tmp/repo', '--controller-namespace', 'janus-system', ...argv], env).values,
    env,
  );

const usageError = (argv: string[], env: NodeJS.ProcessEnv = {}): UsageError => {
  try {
    settings(argv, env);
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
};

describe('janus run: the repository policy', () => {
  it('allows the default namespace only and no ServiceAccount when nothing is configured', () => {
    expect(settings([]).policy).toEqual({
      defaultNamespace: 'default',
      namespaces: ['default'],
      serviceAccounts: [],
      controllerNamespace: 'janus-system',
      sopsKinds: [],
    });
    // The empty values manifests/settings.yaml ships are the same as unset.
    expect(settings([], { JANUS_ALLOWED_NAMESPACES: '', JANUS_ALLOWED_SERVICE_ACCOUNTS: '' }).policy).toEqual(
      settings([]).policy,
    );
  });

  it('reads the flags, or their environment variables', () => {
    expect(
      settings([
        '--allowed-namespaces',
        'shop,payments',
        '--allowed-service-accounts',
        'deployer,payments/ci',
      ]).policy,
    ).toMatchObject({
      namespaces: ['shop', 'payments'],
      serviceAccounts: [{ name: 'deployer' }, { namespace: 'payments', name: 'ci' }],
    });
    expect(
      settings([], { JANUS_ALLOWED_NAMESPACES: 'shop', JANUS_ALLOWED_SERVICE_ACCOUNTS: 'shop/deployer' })
        .policy,
    ).toMatchObject({ namespaces: ['shop'], serviceAccounts: [{ namespace: 'shop', name: 'deployer' }] });
  });

  it("is a usage error (exit 2) to name the controller's namespace or kube-*", () => {
    const controller = usageError(['--allowed-namespaces', 'shop,janus-system']);
    expect(controller.exitCode).toBe(2);
    expect(controller.message).toBe(
      '--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "janus-system" is the controller\'s own namespace: ' +
        'no repository may use it',
    );
    expect(usageError(['--default-namespace', 'kube-system']).message).toMatch(/^--default-namespace /);
    expect(usageError(['--controller-namespace', 'ops', '--default-namespace', 'ops']).message).toContain(
      '"ops" is the controller\'s own namespace',
    );
    expect(usageError([], { JANUS_ALLOWED_SERVICE_ACCOUNTS: '*' }).message).toContain('there is no wildcard');
  });
});
