/**
 * Where a repository lives: an HTTP(S) URL (isomorphic-git speaks smart HTTP only) or a local
 * path, read and written in place (isomorphic-git has no file:// transport).
 */
import { isAbsolute, resolve } from 'node:path';
import { GitAccessError } from './errors.ts';

export type RepositoryLocation = { kind: 'http'; url: string } | { kind: 'local'; path: string };

const SCP_LIKE = /^[\w.-]+@[\w.-]+:(.+)$/;

/**
 * Accepts `https://…`, `http://…`, `file:///path`, or a filesystem path. Refuses SSH (with the
 * HTTPS equivalent as a hint) and URLs carrying credentials (they would end up in logs).
 */
export function parseRepositoryLocation(input: string, cwd: string = process.cwd()): RepositoryLocation {
  const fail = (message: string) =>
    new GitAccessError('unsupported', message, { repository: redactUrl(input) });
  const scp = SCP_LIKE.exec(input);
  if (scp || input.startsWith('ssh://') || input.startsWith('git+ssh://')) {
    const hint = scp ? ` (try https://${input.slice(input.indexOf('@') + 1).replace(':', '/')})` : '';
    throw fail(`SSH remotes are not supported: use an https:// URL with a token${hint}`);
  }
  if (input.startsWith('git://')) throw fail('the git:// protocol is not supported: use https://');
  if (/^https?:\/\//i.test(input)) {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw fail(`not a valid URL: ${redactUrl(input)}`);
    }
    if (url.username !== '' || url.password !== '') {
      throw fail('put credentials in a file or an environment variable, not in the repository URL');
    }
    return { kind: 'http', url: url.toString().replace(/\/+$/, '') };
  }
  if (input.startsWith('file://')) return { kind: 'local', path: new URL(input).pathname };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) throw fail(`unsupported URL scheme in ${redactUrl(input)}`);
  return { kind: 'local', path: isAbsolute(input) ? input : resolve(cwd, input) };
}

export function describeLocation(location: RepositoryLocation): string {
  return location.kind === 'http' ? location.url : location.path;
}

/** Drops any user:password@ from a URL-looking string, for messages. */
export function redactUrl(input: string): string {
  return input.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}
