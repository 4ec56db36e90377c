import { describe, expect, it } from 'vitest';
import { planCommentTarget, postPlanComment } from '../../../src/cli/plan-comment.ts';
import type { ForgeAnswer, SendForgeRequest } from '../../../src/commit-status/client.ts';
import type { ForgeRequest } from '../../../src/commit-status/requests.ts';

const none = {
  'comment-on': undefined,
  'forge-provider': undefined,
  'forge-repository': undefined,
  'forge-api-url': undefined,
  'forge-token-file': undefined,
  output: 'markdown',
};

describe('where the plan is commented, from flags or the CI', () => {
  it('is off without --comment-on', () => {
    expect(planCommentTarget(none, { GITHUB_ACTIONS: 'true' })).toBeUndefined();
  });

  it('takes GitHub Actions, Gitea Actions and GitLab CI variables', () => {
    expect(
      planCommentTarget(
        { ...none, 'comment-on': '12' },
        {
          GITHUB_ACTIONS: 'true',
          GITHUB_REPOSITORY: 'o/r',
          GITHUB_API_URL: 'https://api.github.com',
          GITHUB_TOKEN: 't',
        },
      ),
    ).toEqual({
      forge: { kind: 'github', apiBase: 'https://api.github.com', project: 'o/r' },
      number: 12,
      token: { env: 'GITHUB_TOKEN' },
    });
    expect(
      planCommentTarget(
        { ...none, 'comment-on': '3' },
        {
          GITHUB_ACTIONS: 'true',
          GITEA_ACTIONS: 'true',
          GITHUB_REPOSITORY: 'o/r',
          GITHUB_API_URL: 'https://gitea.example.com/api/v1/',
          JANUS_FORGE_TOKEN: 't',
        },
      ),
    ).toEqual({
      forge: { kind: 'gitea', apiBase: 'https://gitea.example.com/api/v1', project: 'o/r' },
      number: 3,
      token: { env: 'JANUS_FORGE_TOKEN' },
    });
    expect(
      planCommentTarget(
        { ...none, 'comment-on': '5', 'forge-token-file': '/run/token' },
        { GITLAB_CI: 'true', CI_PROJECT_ID: '42', CI_API_V4_URL: 'https://gitlab.example.com/api/v4' },
      ),
    ).toEqual({
      forge: { kind: 'gitlab', apiBase: 'https://gitlab.example.com/api/v4', project: '42' },
      number: 5,
      token: { file: '/run/token' },
    });
  });

  it('names the missing piece', () => {
    const on = { ...none, 'comment-on': '1' };
    expect(() => planCommentTarget({ ...on, output: 'diff' }, {})).toThrow('add -o markdown');
    expect(() => planCommentTarget({ ...on, 'comment-on': '#1' }, {})).toThrow(
      'expected a pull request number',
    );
    expect(() => planCommentTarget(on, {})).toThrow('--forge-provider');
    expect(() => planCommentTarget({ ...on, 'forge-provider': 'gitea' }, {})).toThrow('--forge-repository');
    expect(() =>
      planCommentTarget({ ...on, 'forge-provider': 'gitea', 'forge-repository': 'o/r' }, {}),
    ).toThrow('--forge-api-url');
    expect(() =>
      planCommentTarget({ ...on, 'forge-provider': 'github', 'forge-repository': 'o/r' }, {}),
    ).toThrow('needs a token');
  });

  it('never sends the token to a plain http:// API unless --allow-insecure-http', () => {
    const on = { ...none, 'comment-on': '3', output: 'markdown' };
    const env = { GITEA_ACTIONS: 'true', GITHUB_REPOSITORY: 'o/r', GITHUB_TOKEN: 't' };
    const http = { ...env, GITHUB_API_URL: 'http://gitea.internal:3000/api/v1' };
    expect(() => planCommentTarget(on, http)).toThrow(
      '--comment-on: the forge API http://gitea.internal:3000/api/v1 is plain http:// and the token would cross the network in clear text. Use https://, or pass --allow-insecure-http on a network you trust',
    );
    expect(planCommentTarget({ ...on, 'allow-insecure-http': true }, http)?.forge.apiBase).toBe(
      'http://gitea.internal:3000/api/v1',
    );
    expect(() =>
      planCommentTarget(on, { ...env, GITHUB_API_URL: 'https://gitea.internal/api/v1' }),
    ).not.toThrow();
  });
});

function forge(answers: ForgeAnswer[]): { send: SendForgeRequest; sent: ForgeRequest[] } {
  const sent: ForgeRequest[] = [];
  return {
    sent,
    send: async (request) => {
      sent.push(request);
      const next = answers.shift();
      if (!next) throw new Error('no more answers');
      return next;
    },
  };
}
const ok = (body: unknown, status = 200): ForgeAnswer => ({
  status,
  headers: new Headers(),
  text: JSON.stringify(body),
});
const target = {
  forge: { kind: 'github' as const, apiBase: 'https://api.github.com', project: 'o/r' },
  number: 7,
  token: { env: 'T' },
};

const me = ok({ id: 3, login: 'janus-ci' });
const mine = { user: { id: 3, login: 'janus-ci' } };

describe('posting the plan', () => {
  it("creates the comment when the pull request has none of Janus's, else updates it", async () => {
    const first = forge([me, ok([{ id: 1, body: 'lgtm' }]), ok({ id: 9 }, 201)]);
    expect(await postPlanComment(target, '.', '### plan 1\n', first.send)).toBe('posted the plan on o/r#7');
    expect(first.sent.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET https://api.github.com/user',
      'GET https://api.github.com/repos/o/r/issues/7/comments?per_page=100&page=1',
      'POST https://api.github.com/repos/o/r/issues/7/comments',
    ]);
    expect(first.sent[2]?.body).toEqual({ body: '<!-- janus-plan . -->\n### plan 1\n' });

    const page = Array.from({ length: 100 }, (_, i) => ({ id: 100 + i, body: 'chatter' }));
    const second = forge([
      me,
      ok(page),
      ok([{ id: 9, body: '<!-- janus-plan . -->\n### plan 1\n', ...mine }]),
      ok({ id: 9 }),
    ]);
    expect(await postPlanComment(target, '.', '### plan 2\n', second.send)).toBe(
      "updated the plan's comment 9 on o/r#7",
    );
    expect(second.sent.map((r) => `${r.method} ${r.url}`).slice(2)).toEqual([
      'GET https://api.github.com/repos/o/r/issues/7/comments?per_page=100&page=2',
      'PATCH https://api.github.com/repos/o/r/issues/comments/9',
    ]);
  });

  it("posts its own comment beside a commenter's that begins with the marker, never updating theirs", async () => {
    const planted = { id: 4, body: '<!-- janus-plan . -->\n### Janus plan: ✅ no change', user: { id: 666 } };
    const run = forge([me, ok([planted]), ok({ id: 9 }, 201)]);
    expect(await postPlanComment(target, '.', '### plan\n', run.send)).toBe('posted the plan on o/r#7');
    expect(run.sent.map((r) => r.method)).toEqual(['GET', 'GET', 'POST']);
  });

  it("asks GraphQL's viewer when GitHub refuses /user to an app's installation token (GITHUB_TOKEN)", async () => {
    const bot = { id: 41898282, login: 'github-actions[bot]' };
    const run = forge([
      ok({ message: 'Resource not accessible by integration' }, 403),
      ok({ data: { viewer: { login: bot.login, databaseId: bot.id } } }),
      ok([{ id: 2, body: '<!-- janus-plan . -->\nold', user: bot }]),
      ok({ id: 2 }),
    ]);
    expect(await postPlanComment(target, '.', '### plan\n', run.send)).toBe(
      "updated the plan's comment 2 on o/r#7",
    );
    expect(run.sent[1]).toMatchObject({ method: 'POST', url: 'https://api.github.com/graphql' });
  });

  it('fails, posting nothing, when the forge will not say who the token is', async () => {
    const gitea = { ...target, forge: { ...target.forge, kind: 'gitea' as const } };
    const refused = forge([
      ok({ message: 'token does not have at least one of required scope(s): [read:user]' }, 403),
    ]);
    await expect(postPlanComment(gitea, '.', 'x', refused.send)).rejects.toThrow(
      'GET https://api.github.com/user: the forge answered HTTP 403',
    );
    expect(refused.sent).toHaveLength(1);
  });

  it("fails with the forge's answer when it refuses", async () => {
    const refused = forge([me, ok([]), ok({ message: 'Resource not accessible by integration' }, 403)]);
    await expect(postPlanComment(target, '.', 'x', refused.send)).rejects.toThrow(
      'POST https://api.github.com/repos/o/r/issues/7/comments: the forge answered HTTP 403: {"message":"Resource not accessible by integration"}',
    );
  });
});
