/** `janus run --verify-signatures`: off by default, needs its file, refuses half a configuration. */
import { describe, expect, it } from 'vitest';
import { parse, UsageError } from '../../../src/cli/command.ts';
import run from '../../../src/cli/commands/run.ts';
import { gitSettings } from '../../../src/cli/run-settings.ts';

const settings = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  gitSettings(
    parse(run, ['--controller-namespace', 'janus-system', '--repo', '/r', ...argv], env).values,
    env,
  );

const usageError = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
  try {
    settings(argv, env);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
};

describe('janus run: signed commits', () => {
  it('is off by default', () => {
    expect(settings([]).signatures).toBeUndefined();
  });

  it('takes the file and the scopes from flags or variables', () => {
    const on = settings([
      '--verify-signatures',
      '--allowed-signers-file',
      '/etc/s',
      '--signer-namespaces',
      'a@x=shop',
    ]);
    expect(on.signatures?.allowedSignersFile).toBe('/etc/s');
    expect(on.signatures?.scopes.allows(['a@x'], 'shop')).toBe(true);
    expect(on.signatures?.scopes.allows(['a@x'], 'other')).toBe(false);
    const env = { JANUS_VERIFY_SIGNATURES: 'true', JANUS_ALLOWED_SIGNERS_FILE: '/etc/t' };
    expect(settings([], env).signatures?.allowedSignersFile).toBe('/etc/t');
  });

  it('refuses the flag without a file, and a file or scopes without the flag', () => {
    expect(usageError(['--verify-signatures'])).toBe(
      '--verify-signatures needs --allowed-signers-file (JANUS_ALLOWED_SIGNERS_FILE)',
    );
    expect(usageError(['--allowed-signers-file', '/etc/s'])).toContain(
      'take effect only with --verify-signatures',
    );
    expect(
      usageError(['--verify-signatures', '--allowed-signers-file', '/s', '--signer-namespaces', 'nobody']),
    ).toBe('--signer-namespaces: "nobody": expected principal=namespace');
  });
});
