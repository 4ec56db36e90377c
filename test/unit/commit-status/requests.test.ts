import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Forge, resolveForge } from '../../../src/commit-status/forge.ts';
import {
  alreadyShown,
  postStatusRequest,
  readStatusRequest,
  shownStatus,
} from '../../../src/commit-status/requests.ts';
import type { CommitStatus } from '../../../src/commit-status/state.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8'));

const SHA = '6dcb09b5b57875f334f61aebed695e2e4193db5e';

const status = (s: Partial<CommitStatus> = {}): CommitStatus => ({
  sha: SHA,
  context: 'janus/shop/add-cache',
  state: 'failure',
  description: 'RolledBack: health check failed',
  targetUrl: 'https://janus.example.com/shop/add-cache',
  phase: 'RolledBack',
  ...s,
});

function forge(repository: string, settings = {}): Forge {
  const f = resolveForge(repository, settings);
  if ('error' in f) throw new Error(f.error);
  return f;
}

describe('which forge, from the repository URL', () => {
  it('knows github.com, gitlab hosts, gitea/forgejo hosts and codeberg', () => {
    expect(forge('https://github.com/octocat/Hello-World.git')).toEqual({
      kind: 'github',
      apiBase: 'https://api.github.com',
      project: 'octocat/Hello-World',
    });
    expect(forge('https://gitlab.com/group/sub/project.git')).toEqual({
      kind: 'gitlab',
      apiBase: 'https://gitlab.com/api/v4',
      project: 'group/sub/project',
    });
    expect(forge('https://codeberg.org/o/r')).toMatchObject({
      kind: 'gitea',
      apiBase: 'https://codeberg.org/api/v1',
    });
    expect(forge('https://forgejo.example.com/o/r.git')).toMatchObject({ kind: 'gitea' });
    expect(forge('https://x-access-token@gitea.example.com:3000/o/r.git')).toMatchObject({
      apiBase: 'https://gitea.example.com:3000/api/v1',
      project: 'o/r',
    });
  });

  it('takes the kind and API root when set (GitHub Enterprise, a self-hosted GitLab)', () => {
    expect(forge('https://git.corp.example/team/app.git', { kind: 'github' })).toMatchObject({
      apiBase: 'https://git.corp.example/api/v3',
      project: 'team/app',
    });
    expect(
      forge('https://code.example.com/team/app', {
        kind: 'gitlab',
        apiBase: 'https://code.example.com/gl/api/v4/',
      }),
    ).toMatchObject({ apiBase: 'https://code.example.com/gl/api/v4' });
  });

  it('says why when it cannot tell', () => {
    expect(resolveForge('https://git.example.com/o/r.git')).toEqual({
      error: expect.stringContaining('--commit-status-provider'),
    });
    expect(resolveForge('/srv/git/repo')).toEqual({ error: expect.stringContaining('not an http(s) URL') });
    expect(resolveForge('https://github.com/only-owner')).toEqual({
      error: expect.stringContaining('owner'),
    });
  });
});

describe("GitHub's commit status API (docs.github.com/en/rest/commits/statuses)", () => {
  const github = forge('https://github.com/octocat/Hello-World.git');

  it('creates a status: POST /repos/{owner}/{repo}/statuses/{sha} with state, target_url, description, context', () => {
    expect(postStatusRequest(github, status())).toEqual({
      method: 'POST',
      url: `https://api.github.com/repos/octocat/Hello-World/statuses/${SHA}`,
      body: {
        state: 'failure',
        target_url: 'https://janus.example.com/shop/add-cache',
        description: 'RolledBack: health check failed',
        context: 'janus/shop/add-cache',
      },
    });
    const { targetUrl: _, ...unlinked } = status();
    expect(postStatusRequest(github, unlinked).body).not.toHaveProperty('target_url');
  });

  it('reads what the commit shows from the combined status, one entry per context', () => {
    expect(readStatusRequest(github, SHA, 'janus/shop/add-cache').url).toBe(
      `https://api.github.com/repos/octocat/Hello-World/commits/${SHA}/status?per_page=100&limit=100`,
    );
    const body = fixture('github-combined-status.json');
    expect(shownStatus(github, body, 'janus/shop/add-cache')).toEqual({
      state: 'pending',
      description: 'Preparing: dry runs and locks',
    });
    expect(shownStatus(github, body, 'janus/shop/other')).toBeUndefined();
    const shown = shownStatus(github, body, 'janus/shop/add-cache');
    expect(
      alreadyShown(github, shown, status({ state: 'pending', description: 'Preparing: dry runs and locks' })),
    ).toBe(true);
    expect(
      alreadyShown(
        github,
        shown,
        status({ state: 'pending', description: 'Committing: applying the changes' }),
      ),
    ).toBe(false);
    expect(alreadyShown(github, shown, status())).toBe(false);
  });
});

describe("GitLab's commit status API (docs.gitlab.com/api/commits)", () => {
  const gitlab = forge('https://gitlab.com/janedoe/gitlab-foss.git');

  it('creates a status: POST /projects/:id/statuses/:sha with state (failed, running), name, description, target_url', () => {
    expect(postStatusRequest(gitlab, status())).toEqual({
      method: 'POST',
      url: `https://gitlab.com/api/v4/projects/janedoe%2Fgitlab-foss/statuses/${SHA}`,
      body: {
        state: 'failed',
        name: 'janus/shop/add-cache',
        description: 'RolledBack: health check failed',
        target_url: 'https://janus.example.com/shop/add-cache',
      },
    });
    expect(postStatusRequest(gitlab, status({ state: 'pending', phase: 'Pending' })).body?.state).toBe(
      'pending',
    );
    expect(postStatusRequest(gitlab, status({ state: 'pending', phase: 'Committing' })).body?.state).toBe(
      'running',
    );
    expect(postStatusRequest(gitlab, status({ state: 'success', phase: 'Committed' })).body?.state).toBe(
      'success',
    );
  });

  it('reads the latest status of the name from the list of the commit', () => {
    expect(readStatusRequest(gitlab, SHA, 'janus/shop/add-cache').url).toBe(
      `https://gitlab.com/api/v4/projects/janedoe%2Fgitlab-foss/repository/commits/${SHA}/statuses?name=janus%2Fshop%2Fadd-cache&per_page=100`,
    );
    const body = fixture('gitlab-commit-statuses.json');
    const shown = shownStatus(gitlab, body, 'janus/shop/add-cache');
    expect(shown).toEqual({
      state: 'failed',
      description: 'RolledBack: health check failed: Deployment shop/web: ProgressDeadlineExceeded',
    });
    expect(
      alreadyShown(
        gitlab,
        shown,
        status({
          description: 'RolledBack: health check failed: Deployment shop/web: ProgressDeadlineExceeded',
        }),
      ),
    ).toBe(true);
    // GitLab refuses running → running: a running status is shown whatever its description.
    expect(
      alreadyShown(
        gitlab,
        { state: 'running', description: 'Preparing: dry runs and locks' },
        status({ state: 'pending', phase: 'Verifying', description: 'Verifying: …' }),
      ),
    ).toBe(true);
  });
});
