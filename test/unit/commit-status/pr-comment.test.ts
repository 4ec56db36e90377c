import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Forge } from '../../../src/commit-status/forge.ts';
import {
  COMMENT_LIMIT,
  commentBody,
  commentMarker,
  createCommentRequest,
  currentUserRequest,
  findMarkedComment,
  graphqlUrl,
  hasNextPage,
  listCommentsRequest,
  parseCurrentUser,
  parseViewer,
  updateCommentRequest,
  viewerRequest,
} from '../../../src/commit-status/pr-comment.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8'));

const github: Forge = { kind: 'github', apiBase: 'https://api.github.com', project: 'octocat/Hello-World' };
const gitea: Forge = { kind: 'gitea', apiBase: 'https://gitea.example.com/api/v1', project: 'shop/deploy' };
const gitlab: Forge = {
  kind: 'gitlab',
  apiBase: 'https://gitlab.example.com/api/v4',
  project: 'group/sub/project',
};

describe('the pull-request comment requests, per forge', () => {
  it('GitHub: issue comments, paged by 100, updated by comment id', () => {
    expect(listCommentsRequest(github, 1347, 2)).toEqual({
      method: 'GET',
      url: 'https://api.github.com/repos/octocat/Hello-World/issues/1347/comments?per_page=100&page=2',
    });
    expect(createCommentRequest(github, 1347, 'hi')).toEqual({
      method: 'POST',
      url: 'https://api.github.com/repos/octocat/Hello-World/issues/1347/comments',
      body: { body: 'hi' },
    });
    expect(updateCommentRequest(github, 1347, 2, 'hi')).toEqual({
      method: 'PATCH',
      url: 'https://api.github.com/repos/octocat/Hello-World/issues/comments/2',
      body: { body: 'hi' },
    });
  });

  it('Gitea: the same paths under /api/v1, every comment in one answer', () => {
    expect(listCommentsRequest(gitea, 7, 1)).toEqual({
      method: 'GET',
      url: 'https://gitea.example.com/api/v1/repos/shop/deploy/issues/7/comments',
    });
    expect(createCommentRequest(gitea, 7, 'x').url).toBe(
      'https://gitea.example.com/api/v1/repos/shop/deploy/issues/7/comments',
    );
    expect(updateCommentRequest(gitea, 7, 99, 'x')).toEqual({
      method: 'PATCH',
      url: 'https://gitea.example.com/api/v1/repos/shop/deploy/issues/comments/99',
      body: { body: 'x' },
    });
    expect(hasNextPage(gitea, 100, 1)).toBe(false);
  });

  it('GitLab: merge request notes by project path or id, oldest first, updated with PUT', () => {
    expect(listCommentsRequest(gitlab, 2, 1)).toEqual({
      method: 'GET',
      url: 'https://gitlab.example.com/api/v4/projects/group%2Fsub%2Fproject/merge_requests/2/notes?per_page=100&page=1&sort=asc&order_by=created_at',
    });
    expect(createCommentRequest({ ...gitlab, project: '5' }, 2, 'x')).toEqual({
      method: 'POST',
      url: 'https://gitlab.example.com/api/v4/projects/5/merge_requests/2/notes',
      body: { body: 'x' },
    });
    expect(updateCommentRequest(gitlab, 2, 302, 'x')).toEqual({
      method: 'PUT',
      url: 'https://gitlab.example.com/api/v4/projects/group%2Fsub%2Fproject/merge_requests/2/notes/302',
      body: { body: 'x' },
    });
  });

  it('reads further pages only while a page is full, up to 20', () => {
    expect(hasNextPage(github, 100, 1)).toBe(true);
    expect(hasNextPage(github, 99, 1)).toBe(false);
    expect(hasNextPage(gitlab, 100, 20)).toBe(false);
  });
});

describe("finding Janus's earlier comment", () => {
  const actionsBot = { id: 41898282, login: 'github-actions[bot]' };
  const projectBot = { id: 7, login: 'project_5_bot' };
  const me = { id: 3, login: 'janus-ci' };

  it('finds the comment holding the marker, by the token user, in the documented list answers', () => {
    expect(findMarkedComment(fixture('github-issue-comments.json'), commentMarker('.'), actionsBot)).toBe(2);
    expect(
      findMarkedComment(
        fixture('gitlab-merge-request-notes.json'),
        commentMarker('transactions'),
        projectBot,
      ),
    ).toBe(302);
  });

  it("never takes a marked comment someone else wrote: a commenter's, posted first to be adopted", () => {
    const octocat = { id: 1, login: 'octocat' };
    expect(
      findMarkedComment(fixture('github-issue-comments.json'), commentMarker('.'), octocat),
    ).toBeUndefined();
    const marked = `${commentMarker('.')}\n### Janus plan: ✅ no change`;
    const comments = [
      { id: 5, body: marked, user: { id: 666, login: 'mallory' } },
      { id: 6, body: marked, author: { id: 666, username: 'mallory' } },
      { id: 7, body: marked, user: { login: 'janus-ci' } }, // a login alone proves nothing
      { id: 8, body: marked, user: { id: 3, login: 'janus-ci' } },
    ];
    expect(findMarkedComment(comments, commentMarker('.'), me)).toBe(8);
    expect(findMarkedComment(comments.slice(0, 3), commentMarker('.'), me)).toBeUndefined();
  });

  it("does not take another directory's plan, a comment without the marker, or an odd answer", () => {
    expect(
      findMarkedComment(fixture('github-issue-comments.json'), commentMarker('transactions'), actionsBot),
    ).toBeUndefined();
    const mine = { user: { id: 3 } };
    expect(
      findMarkedComment([{ id: 5, body: 'Janus plan', ...mine }], commentMarker('.'), me),
    ).toBeUndefined();
    // A reply quoting the plan is someone else's comment: never updated in its place.
    const quoted = `> ${commentMarker('.')}\n> Janus plan\n\nLooks wrong to me`;
    expect(findMarkedComment([{ id: 6, body: quoted, ...mine }], commentMarker('.'), me)).toBeUndefined();
    expect(findMarkedComment({ message: 'Not Found' }, commentMarker('.'), me)).toBeUndefined();
  });

  it('asks each forge who the token is: GET /user, and GraphQL viewer on GitHub for an app token', () => {
    expect(currentUserRequest(github)).toEqual({ method: 'GET', url: 'https://api.github.com/user' });
    expect(currentUserRequest(gitea).url).toBe('https://gitea.example.com/api/v1/user');
    expect(currentUserRequest(gitlab).url).toBe('https://gitlab.example.com/api/v4/user');
    expect(viewerRequest(github)).toEqual({
      method: 'POST',
      url: 'https://api.github.com/graphql',
      body: { query: 'query { viewer { login databaseId } }' },
    });
    expect(graphqlUrl('https://ghe.example.com/api/v3')).toBe('https://ghe.example.com/api/graphql');
    expect(parseCurrentUser({ id: 1, login: 'octocat', type: 'User' })).toEqual({ id: 1, login: 'octocat' });
    expect(parseCurrentUser({ id: 7, username: 'project_5_bot' })).toEqual(projectBot);
    expect(parseCurrentUser({ message: 'Bad credentials' })).toBeUndefined();
    expect(parseViewer({ data: { viewer: { login: 'github-actions[bot]', databaseId: 41898282 } } })).toEqual(
      actionsBot,
    );
    expect(parseViewer({ errors: [{ message: 'x' }] })).toBeUndefined();
  });

  it('keeps the marker a valid HTML comment whatever the directory is called', () => {
    expect(commentMarker('a--b>c')).toBe('<!-- janus-plan a-bc -->');
  });
});

describe('the comment body', () => {
  it('is the marker, then the plan, when it fits', () => {
    expect(commentBody('<!-- m -->', '### plan\n', COMMENT_LIMIT.github)).toBe('<!-- m -->\n### plan\n');
  });

  it("is cut at a line to the forge's limit, closing an open code block and saying so", () => {
    const plan = `### plan\n\n\`\`\`diff\n${'+  line\n'.repeat(20_000)}\`\`\`\n`;
    const body = commentBody('<!-- m -->', plan, COMMENT_LIMIT.github);
    expect(COMMENT_LIMIT).toEqual({ github: 65_536, gitlab: 1_000_000, gitea: 65_535 });
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body.startsWith('<!-- m -->\n### plan')).toBe(true);
    expect(body).toMatch(
      /\+ {2}line\n```\n\n_… cut here: the plan is 160,022 characters, over this forge's 65,536; the job's output holds all of it\._\n$/,
    );
  });
});
