/**
 * `janus plan --comment-on <number>`: posts the Markdown plan as Janus's one comment on a pull or
 * merge request, updating the comment an earlier run posted (found by its hidden marker, and
 * written by the token's own user: the forge is asked who that is) instead of adding one per push. The forge, repository, API root and token come from flags or from what the
 * CI already sets (GitHub Actions, Gitea Actions, GitLab CI). A comment that cannot be posted is
 * an error (exit 3) that quotes the forge's answer; the token is never printed.
 */
import { forgeSender, type SendForgeRequest } from '../commit-status/client.ts';
import { FORGE_KINDS, type Forge, type ForgeKind } from '../commit-status/forge.ts';
import {
  COMMENT_LIMIT,
  commentBody,
  commentMarker,
  createCommentRequest,
  currentUserRequest,
  type ForgeUser,
  findMarkedComment,
  graphqlUrl,
  hasNextPage,
  listCommentsRequest,
  parseCurrentUser,
  parseViewer,
  updateCommentRequest,
  viewerRequest,
} from '../commit-status/pr-comment.ts';
import { judgeResponse } from '../commit-status/rate-limit.ts';
import type { ForgeRequest } from '../commit-status/requests.ts';
import type { SecretSource } from '../git/auth.ts';
import { VERSION } from '../version.ts';
import { UsageError } from './command.ts';
import { refusePlainHttpToken } from './plain-http.ts';

/** Exit status of `janus plan` when the plan was made but its comment could not be posted. */
export const COMMENT_FAILED_EXIT = 3;
/** Tries per request when the forge is rate limited or down; the wait between grows 2 s, 4 s. */
export const COMMENT_ATTEMPTS = 3;
/** A forge's "retry after" longer than this fails the post instead of holding the job. */
export const MAX_COMMENT_WAIT_MS = 60_000;

export const PLAN_COMMENT_FLAGS = {
  'comment-on': {
    type: 'string',
    env: 'JANUS_PLAN_COMMENT_ON',
    placeholder: 'number',
    description:
      "with -o markdown, also post the plan as a comment on this pull/merge request number, updating Janus's earlier comment there",
  },
  'forge-provider': {
    type: 'string',
    env: 'JANUS_FORGE_PROVIDER',
    placeholder: 'github|gitlab|gitea',
    description: 'the forge (default: gitlab in GitLab CI, gitea in Gitea Actions, github in GitHub Actions)',
  },
  'forge-repository': {
    type: 'string',
    env: 'JANUS_FORGE_REPOSITORY',
    placeholder: 'owner/name',
    description: 'the repository (default: $GITHUB_REPOSITORY; GitLab: $CI_PROJECT_ID, or the project path)',
  },
  'forge-api-url': {
    type: 'string',
    env: 'JANUS_FORGE_API_URL',
    placeholder: 'url',
    description:
      "the forge's API root (default: $CI_API_V4_URL in GitLab CI, $GITHUB_API_URL in GitHub/Gitea Actions, else https://api.github.com)",
  },
  'forge-token-file': {
    type: 'string',
    env: 'JANUS_FORGE_TOKEN_FILE',
    placeholder: 'path',
    description: 'file holding the forge API token (or set JANUS_FORGE_TOKEN, else GITHUB_TOKEN)',
  },
  'allow-insecure-http': {
    type: 'boolean',
    env: 'JANUS_ALLOW_INSECURE_HTTP',
    description:
      'send the forge token to an http:// API, in clear text (refused without it; only for a trusted network)',
  },
} as const;

export interface PlanCommentTarget {
  forge: Forge;
  number: number;
  token: SecretSource;
}

type Values = {
  [K in Exclude<keyof typeof PLAN_COMMENT_FLAGS, 'allow-insecure-http'>]: string | undefined;
} & {
  'allow-insecure-http'?: boolean | undefined;
};

/** Where to comment, or undefined without --comment-on; every problem a UsageError naming its flag. */
export function planCommentTarget(
  values: Values & { output: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): PlanCommentTarget | undefined {
  const on = values['comment-on'];
  if (on === undefined || on === '') return undefined;
  if (values.output !== 'markdown')
    throw new UsageError('--comment-on posts the Markdown plan: add -o markdown');
  if (!/^[1-9][0-9]{0,9}$/.test(on))
    throw new UsageError(`--comment-on: expected a pull request number, got "${on}"`);
  const kind = forgeKind(values['forge-provider'], env);
  const project =
    values['forge-repository'] ?? (kind === 'gitlab' ? env.CI_PROJECT_ID : env.GITHUB_REPOSITORY);
  if (!project) throw new UsageError('--comment-on needs --forge-repository (owner/name)');
  const apiBase = (
    values['forge-api-url'] ??
    (kind === 'gitlab' ? env.CI_API_V4_URL : env.GITHUB_API_URL) ??
    (kind === 'github' ? 'https://api.github.com' : '')
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/i.test(apiBase)) {
    throw new UsageError(`--forge-api-url: expected an http(s) URL, got "${apiBase}"`);
  }
  refusePlainHttpToken('--comment-on', apiBase, values['allow-insecure-http']);
  const token = tokenSource(values['forge-token-file'], env);
  if (!token)
    throw new UsageError('--comment-on needs a token: --forge-token-file, JANUS_FORGE_TOKEN or GITHUB_TOKEN');
  return { forge: { kind, apiBase, project }, number: Number(on), token };
}

/** The forge as set, else the CI's own: GitLab CI, Gitea Actions (which also sets GITHUB_ACTIONS), GitHub Actions. */
function forgeKind(flag: string | undefined, env: NodeJS.ProcessEnv): ForgeKind {
  const kind =
    flag ?? (env.GITLAB_CI ? 'gitlab' : env.GITEA_ACTIONS ? 'gitea' : env.GITHUB_ACTIONS ? 'github' : '');
  if (!FORGE_KINDS.includes(kind as ForgeKind)) {
    throw new UsageError(`--forge-provider: expected ${FORGE_KINDS.join(', ')}, got "${kind}"`);
  }
  return kind as ForgeKind;
}

function tokenSource(file: string | undefined, env: NodeJS.ProcessEnv): SecretSource | undefined {
  if (file) return { file };
  if (env.JANUS_FORGE_TOKEN) return { env: 'JANUS_FORGE_TOKEN' };
  return env.GITHUB_TOKEN ? { env: 'GITHUB_TOKEN' } : undefined;
}

/** Creates or updates Janus's comment for `key`; returns what it did, for the log. */
export async function postPlanComment(
  target: PlanCommentTarget,
  key: string,
  markdown: string,
  send: SendForgeRequest = forgeSender(target.token, `janus/${VERSION}`),
): Promise<string> {
  const { forge, number } = target;
  const marker = commentMarker(key);
  const body = commentBody(marker, markdown, COMMENT_LIMIT[forge.kind]);
  const me = await tokenUser(send, forge);
  let id: number | undefined;
  for (let page = 1; id === undefined; page++) {
    const list = JSON.parse(await request(send, listCommentsRequest(forge, number, page))) as unknown;
    id = findMarkedComment(list, marker, me);
    if (id !== undefined || !Array.isArray(list) || !hasNextPage(forge, list.length, page)) break;
  }
  if (id === undefined) {
    await request(send, createCommentRequest(forge, number, body));
    return `posted the plan on ${forge.project}#${number}`;
  }
  await request(send, updateCommentRequest(forge, number, id, body));
  return `updated the plan's comment ${id} on ${forge.project}#${number}`;
}

/** Who the token is: only that user's marked comment is updated, anyone else's is left alone. */
async function tokenUser(send: SendForgeRequest, forge: Forge): Promise<ForgeUser> {
  let answer: string;
  try {
    answer = await request(send, currentUserRequest(forge));
  } catch (error) {
    // GitHub refuses /user to an app's installation token (GITHUB_TOKEN); GraphQL's viewer answers.
    if (!(forge.kind === 'github' && error instanceof ForgeRefusal && error.status === 403)) throw error;
    const viewer = parseViewer(JSON.parse(await request(send, viewerRequest(forge))) as unknown);
    if (viewer) return viewer;
    throw new Error(`${graphqlUrl(forge.apiBase)}: the forge did not say who the token is (viewer)`);
  }
  const user = parseCurrentUser(JSON.parse(answer) as unknown);
  if (!user) throw new Error(`GET ${forge.apiBase}/user: the forge did not say who the token is`);
  return user;
}

/** A forge's answer that retrying cannot change, with its status. */
class ForgeRefusal extends Error {
  override readonly name = 'ForgeRefusal';
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** The answer's body; retried on a rate limit or an outage; an Error quoting the forge otherwise. */
async function request(send: SendForgeRequest, req: ForgeRequest): Promise<string> {
  const what = `${req.method} ${req.url.replace(/\?.*$/, '')}`;
  for (let attempt = 1; ; attempt++) {
    let answer: Awaited<ReturnType<SendForgeRequest>>;
    try {
      answer = await send(req, AbortSignal.timeout(MAX_COMMENT_WAIT_MS));
    } catch (error) {
      if (attempt >= COMMENT_ATTEMPTS) throw new Error(`${what}: ${networkError(error)}`);
      await sleep(2000 * attempt);
      continue;
    }
    const verdict = judgeResponse(answer.status, answer.headers, answer.text, Date.now());
    if (verdict.kind === 'done') return answer.text;
    const wait = verdict.kind === 'retry' ? Math.max(verdict.afterMs ?? 0, 2000 * attempt) : undefined;
    if (wait === undefined || attempt >= COMMENT_ATTEMPTS || wait > MAX_COMMENT_WAIT_MS) {
      throw new ForgeRefusal(`${what}: the forge answered ${verdict.why}`, answer.status);
    }
    await sleep(wait);
  }
}

/** fetch says "fetch failed"; its cause says why (ECONNREFUSED, a certificate, a timeout). */
function networkError(error: unknown): string {
  const { message, cause } = error as { message?: string; cause?: { code?: string; message?: string } };
  const why = cause?.code ?? cause?.message;
  return why ? `${message} (${why})` : String(message);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
