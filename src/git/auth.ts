/**
 * Credentials for HTTPS remotes: a token or a password, read from a file (a mounted Secret, re-read
 * on every operation so rotation needs no restart) or from an environment variable. The secret
 * never appears in logs, errors, JSON or util.inspect output.
 */
import { readFile } from 'node:fs/promises';
import { inspect } from 'node:util';
import { GitAccessError } from './errors.ts';

export type SecretSource = { file: string } | { env: string };

export interface GitAuthConfig {
  /**
   * User name for basic auth. With a token, the default `x-access-token` works for GitHub and
   * Gitea/Forgejo; GitLab expects `oauth2`, Bitbucket `x-token-auth`.
   */
  username?: string;
  /** Where the password or token comes from. */
  secret: SecretSource;
  /** `basic` (default) sends `username:secret`; `bearer` sends `Authorization: Bearer <secret>`. */
  scheme?: 'basic' | 'bearer';
}

export const DEFAULT_TOKEN_USERNAME = 'x-access-token';

const REDACTED = '[redacted]';

export class GitCredentials {
  readonly scheme: 'basic' | 'bearer';
  readonly username: string;
  readonly source: string;
  readonly #secret: string;

  constructor(scheme: 'basic' | 'bearer', username: string, secret: string, source: string) {
    this.scheme = scheme;
    this.username = username;
    this.source = source;
    this.#secret = secret;
  }

  /**
   * Sent on every request: isomorphic-git's onAuth would first take a 401 round trip each time.
   * A redirect to another host drops the header (fetch does), so it is not leaked.
   */
  headers(): Record<string, string> {
    if (this.scheme === 'bearer') return { Authorization: `Bearer ${this.#secret}` };
    return { Authorization: `Basic ${Buffer.from(`${this.username}:${this.#secret}`).toString('base64')}` };
  }

  toString(): string {
    return `GitCredentials(${this.scheme}, username=${this.username}, secret=${REDACTED} from ${this.source})`;
  }

  toJSON(): Record<string, string> {
    return { scheme: this.scheme, username: this.username, secret: REDACTED, source: this.source };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export type CredentialsProvider = () => Promise<GitCredentials>;

export function describeSecretSource(source: SecretSource): string {
  return 'file' in source ? `file ${source.file}` : `environment variable ${source.env}`;
}

/** Returns a provider that reads the secret afresh on each call, failing with a message that names its source. */
export function credentialsProvider(
  config: GitAuthConfig,
  env: NodeJS.ProcessEnv = process.env,
): CredentialsProvider {
  const source = describeSecretSource(config.secret);
  const scheme = config.scheme ?? 'basic';
  const username = config.username ?? DEFAULT_TOKEN_USERNAME;
  return async () => {
    const secret = await readSecret(config.secret, env, source);
    return new GitCredentials(scheme, username, secret, source);
  };
}

async function readSecret(secret: SecretSource, env: NodeJS.ProcessEnv, source: string): Promise<string> {
  let value: string | undefined;
  if ('file' in secret) {
    try {
      value = await readFile(secret.file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new GitAccessError('auth', `cannot read the Git credentials from ${source} (${code})`, {
        repository: '',
        cause: error,
      });
    }
  } else {
    value = env[secret.env];
  }
  // Files from `echo` or kubectl carry a trailing newline that is not part of the secret.
  const trimmed = value?.replace(/\r?\n$/, '') ?? '';
  if (trimmed === '') {
    throw new GitAccessError('auth', `the Git credentials in ${source} are empty or missing`, {
      repository: '',
    });
  }
  return trimmed;
}
