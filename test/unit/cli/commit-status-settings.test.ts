import { describe, expect, it } from 'vitest';
import { commitStatusSettings } from '../../../src/cli/commit-status-settings.ts';

const values = (v: Partial<Parameters<typeof commitStatusSettings>[0]> = {}) => ({
  repo: 'https://github.com/acme/changes.git',
  'commit-status-token-file': undefined,
  'commit-status-provider': undefined,
  'commit-status-api-url': undefined,
  'commit-status-target-url': undefined,
  'allow-insecure-http': false,
  ...v,
});

describe('the commit status settings of janus run', () => {
  it('are off without a token, and refuse a status setting without one', () => {
    expect(commitStatusSettings(values(), {})).toBeUndefined();
    expect(() => commitStatusSettings(values({ 'commit-status-provider': 'github' }), {})).toThrow(
      /--commit-status-provider needs a token/,
    );
  });

  it('take the forge from the repository, a token from a file or the environment, and a link template', () => {
    expect(commitStatusSettings(values({ 'commit-status-token-file': '/t' }), {})).toEqual({
      forge: { kind: 'github', apiBase: 'https://api.github.com', project: 'acme/changes' },
      token: { file: '/t' },
    });
    expect(
      commitStatusSettings(values({ 'commit-status-target-url': 'https://x/{name}' }), {
        JANUS_COMMIT_STATUS_TOKEN: 's',
      }),
    ).toMatchObject({ token: { env: 'JANUS_COMMIT_STATUS_TOKEN' }, targetUrl: 'https://x/{name}' });
  });

  it('name the flag at fault', () => {
    const env = { JANUS_COMMIT_STATUS_TOKEN: 's' };
    expect(() => commitStatusSettings(values({ 'commit-status-provider': 'bitbucket' }), env)).toThrow(
      /--commit-status-provider: expected github, gitlab, gitea/,
    );
    expect(() => commitStatusSettings(values({ repo: 'https://git.example.com/a/b' }), env)).toThrow(
      /set --commit-status-provider/,
    );
    expect(() => commitStatusSettings(values({ 'commit-status-api-url': 'ftp://x' }), env)).toThrow(
      /--commit-status-api-url/,
    );
  });

  it('refuse to send the token over plain http:// unless --allow-insecure-http', () => {
    const env = { JANUS_COMMIT_STATUS_TOKEN: 's' };
    const http = values({ repo: 'http://127.0.0.1:3000/o/r.git', 'commit-status-provider': 'gitea' });
    expect(() => commitStatusSettings(http, env)).toThrow(/plain http:\/\//);
    expect(commitStatusSettings({ ...http, 'allow-insecure-http': true }, env)?.forge.apiBase).toBe(
      'http://127.0.0.1:3000/api/v1',
    );
  });
});
