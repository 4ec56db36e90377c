/**
 * Which forge hosts the watched repository and where its API is: from the repository URL
 * (github.com, gitlab.com, a host named like gitea/forgejo/codeberg) or set explicitly, with the
 * API base overridable (GitHub Enterprise, a self-hosted GitLab or Gitea). Pure.
 */

export type ForgeKind = 'github' | 'gitlab' | 'gitea';

export const FORGE_KINDS: readonly ForgeKind[] = ['github', 'gitlab', 'gitea'];

export interface Forge {
  kind: ForgeKind;
  /** The API root without a trailing slash, e.g. https://api.github.com, https://host/api/v1. */
  apiBase: string;
  /** "owner/repo" (GitHub, Gitea) or the project's full path "group/sub/project" (GitLab). */
  project: string;
}

export interface ForgeSettings {
  /** Set explicitly; else guessed from the host. */
  kind?: ForgeKind | undefined;
  /** Set explicitly; else the forge's default for the repository's host. */
  apiBase?: string | undefined;
}

/** The forge of `repository` (an http(s) URL), or why it cannot be told. */
export function resolveForge(repository: string, settings: ForgeSettings = {}): Forge | { error: string } {
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    return { error: `the repository "${repository}" is not an http(s) URL: no forge to send statuses to` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { error: `the repository's scheme ${url.protocol} has no forge API` };
  }
  const kind = settings.kind ?? guessKind(url.hostname);
  if (!kind) {
    return {
      error: `cannot tell the forge from the host ${url.hostname}: set --commit-status-provider (github, gitlab or gitea)`,
    };
  }
  const project = url.pathname
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/, '')
    .replace(/\/-$/, '');
  if (project.split('/').length < 2) {
    return { error: `the repository path "${url.pathname}" does not name an owner and a repository` };
  }
  const apiBase = (settings.apiBase ?? defaultApiBase(kind, url)).replace(/\/+$/, '');
  return { kind, apiBase, project };
}

function guessKind(host: string): ForgeKind | undefined {
  const h = host.toLowerCase();
  if (h === 'github.com' || h === 'www.github.com') return 'github';
  if (h === 'gitlab.com' || h.startsWith('gitlab.')) return 'gitlab';
  if (h === 'codeberg.org' || h === 'gitea.com' || /(^|\.)(gitea|forgejo)\./.test(h)) return 'gitea';
  return undefined;
}

/**
 * GitHub: api.github.com, or <host>/api/v3 for GitHub Enterprise Server; GitLab: <host>/api/v4;
 * Gitea/Forgejo: <host><sub-path>/api/v1 (a Gitea under a sub-path serves its API there too; the
 * project path then starts after it, so such a setup sets --commit-status-api-url).
 */
function defaultApiBase(kind: ForgeKind, url: URL): string {
  switch (kind) {
    case 'github':
      return url.hostname === 'github.com' ? 'https://api.github.com' : `${url.origin}/api/v3`;
    case 'gitlab':
      return `${url.origin}/api/v4`;
    case 'gitea':
      return `${url.origin}/api/v1`;
  }
}

/**
 * The forge's web page of `commit` in `repository` (for links to the record of an outcome), or
 * undefined when the forge cannot be told from the URL.
 */
export function commitPageUrl(repository: string, commit: string, kind?: ForgeKind): string | undefined {
  const forge = resolveForge(repository, kind ? { kind } : {});
  if ('error' in forge || !/^[0-9a-f]{40,64}$/.test(commit)) return undefined;
  const url = new URL(repository);
  const base = `${url.protocol}//${url.host}/${forge.project}`;
  return forge.kind === 'gitlab' ? `${base}/-/commit/${commit}` : `${base}/commit/${commit}`;
}
