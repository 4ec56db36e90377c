/**
 * The commit-status flags of `janus run`: off unless a token is given; the forge from the
 * repository URL unless set; checked before anything starts, every problem a UsageError naming
 * its flag.
 */
import { FORGE_KINDS, type ForgeKind, resolveForge } from '../commit-status/forge.ts';
import type { CommitStatusSettings } from '../commit-status/term.ts';
import { UsageError } from './command.ts';
import { refusePlainHttpToken } from './plain-http.ts';

export const COMMIT_STATUS_FLAGS = {
  'commit-status-token-file': {
    type: 'string',
    env: 'JANUS_COMMIT_STATUS_TOKEN_FILE',
    placeholder: 'path',
    description:
      "file holding a forge API token, re-read on each use (or set JANUS_COMMIT_STATUS_TOKEN); with one, each transaction directory's source commit shows its outcome as a commit status",
  },
  'commit-status-provider': {
    type: 'string',
    env: 'JANUS_COMMIT_STATUS_PROVIDER',
    placeholder: 'github|gitlab|gitea',
    description:
      'the forge of --repo (default: from its host: github.com, gitlab.*, gitea.*, forgejo.*, codeberg.org); Forgejo is gitea',
  },
  'commit-status-api-url': {
    type: 'string',
    env: 'JANUS_COMMIT_STATUS_API_URL',
    placeholder: 'url',
    description:
      "the forge's API root (default: https://api.github.com, <host>/api/v3 for GitHub Enterprise, <host>/api/v4 for GitLab, <host>/api/v1 for Gitea)",
  },
  'commit-status-target-url': {
    type: 'string',
    env: 'JANUS_COMMIT_STATUS_TARGET_URL',
    placeholder: 'template',
    description:
      'the link each status carries; {namespace}, {name}, {sha}, {phase} and {path} are filled in (default: no link)',
  },
} as const;

export function commitStatusSettings(
  values: {
    repo: string;
    'commit-status-token-file': string | undefined;
    'commit-status-provider': string | undefined;
    'commit-status-api-url': string | undefined;
    'commit-status-target-url': string | undefined;
    'allow-insecure-http': boolean;
  },
  env: NodeJS.ProcessEnv = process.env,
): CommitStatusSettings | undefined {
  const file = values['commit-status-token-file'];
  const token = file
    ? { file }
    : env.JANUS_COMMIT_STATUS_TOKEN
      ? { env: 'JANUS_COMMIT_STATUS_TOKEN' }
      : undefined;
  const others = (
    ['commit-status-provider', 'commit-status-api-url', 'commit-status-target-url'] as const
  ).filter((flag) => values[flag] !== undefined);
  if (!token) {
    if (others.length === 0) return undefined;
    throw new UsageError(
      `--${others[0]} needs a token: --commit-status-token-file or JANUS_COMMIT_STATUS_TOKEN (commit statuses are off without one)`,
    );
  }
  const kind = values['commit-status-provider'];
  if (kind !== undefined && !FORGE_KINDS.includes(kind as ForgeKind)) {
    throw new UsageError(`--commit-status-provider: expected ${FORGE_KINDS.join(', ')}, got "${kind}"`);
  }
  const apiBase = values['commit-status-api-url'];
  if (apiBase !== undefined && !/^https?:\/\/[^/]/i.test(apiBase)) {
    throw new UsageError(`--commit-status-api-url: expected an http(s) URL, got "${apiBase}"`);
  }
  const forge = resolveForge(values.repo, { kind: kind as ForgeKind | undefined, apiBase });
  if ('error' in forge) throw new UsageError(`commit statuses: ${forge.error}`);
  refusePlainHttpToken('commit statuses', forge.apiBase, values['allow-insecure-http']);
  const targetUrl = values['commit-status-target-url'];
  return { forge, token, ...(targetUrl !== undefined && { targetUrl }) };
}
