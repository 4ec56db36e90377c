/** Which repository locations are accepted, and how refusals explain themselves. */
import { describe, expect, it } from 'vitest';
import { GitAccessError, parseRepositoryLocation, redactUrl } from '../../../src/git/index.ts';

describe('parseRepositoryLocation', () => {
  it('accepts https URLs, local paths and file:// URLs', () => {
    expect(parseRepositoryLocation('https://github.com/acme/deploys.git/')).toEqual({
      kind: 'http',
      url: 'https://github.com/acme/deploys.git',
    });
    expect(parseRepositoryLocation('/srv/git/deploys')).toEqual({ kind: 'local', path: '/srv/git/deploys' });
    expect(parseRepositoryLocation('deploys', '/home/me')).toEqual({
      kind: 'local',
      path: '/home/me/deploys',
    });
    expect(parseRepositoryLocation('file:///srv/git/deploys')).toEqual({
      kind: 'local',
      path: '/srv/git/deploys',
    });
  });

  it('refuses SSH with the https equivalent as a hint', () => {
    expect(() => parseRepositoryLocation('git@github.com:acme/deploys.git')).toThrow(
      'SSH remotes are not supported: use an https:// URL with a token (try https://github.com/acme/deploys.git)',
    );
    expect(() => parseRepositoryLocation('ssh://git@github.com/acme/deploys.git')).toThrow(GitAccessError);
  });

  it('refuses credentials in the URL without repeating them', () => {
    const attempt = () => parseRepositoryLocation('https://bot:hunter2@github.com/acme/deploys.git');
    expect(attempt).toThrow(
      'put credentials in a file or an environment variable, not in the repository URL',
    );
    try {
      attempt();
    } catch (error) {
      expect((error as GitAccessError).repository).toBe('https://github.com/acme/deploys.git');
      expect(JSON.stringify(error)).not.toContain('hunter2');
    }
    expect(redactUrl('https://bot:hunter2@github.com/x')).toBe('https://github.com/x');
  });
});
