import { describe, expect, it } from 'vitest';
import { branchRef, classifyEvent, detectProvider, parsePushRef } from '../../../src/webhook/index.ts';

describe('detectProvider', () => {
  it('recognizes each sender by the headers it always sets', () => {
    expect(detectProvider({ 'x-github-event': 'push' })).toBe('github');
    expect(detectProvider({ 'x-gitlab-event': 'Push Hook' })).toBe('gitlab');
    expect(detectProvider({ 'x-gitlab-token': 't' })).toBe('gitlab');
    expect(detectProvider({ 'x-forgejo-event': 'push' })).toBe('gitea');
    expect(detectProvider({ 'x-janus-signature': 'sha256=00' })).toBe('generic');
  });

  it('says gitea for Gitea, which also sends GitHub’s headers', () => {
    const gitea = { 'x-gitea-event': 'push', 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=00' };
    expect(detectProvider(gitea)).toBe('gitea');
  });

  it('says generic for a bare X-Hub-Signature-256 and nothing for an anonymous request', () => {
    expect(detectProvider({ 'x-hub-signature-256': 'sha256=00' })).toBe('generic');
    expect(detectProvider({ 'content-type': 'application/json' })).toBeUndefined();
  });
});

describe('classifyEvent', () => {
  it('knows push, ping and everything else', () => {
    expect(classifyEvent('github', { 'x-github-event': 'push' })).toEqual({ kind: 'push' });
    expect(classifyEvent('github', { 'x-github-event': 'ping' })).toEqual({ kind: 'ping' });
    expect(classifyEvent('github', { 'x-github-event': 'issues' })).toEqual({
      kind: 'other',
      name: 'issues',
    });
    expect(classifyEvent('gitlab', { 'x-gitlab-event': 'Push Hook' })).toEqual({ kind: 'push' });
    expect(classifyEvent('gitlab', { 'x-gitlab-event': 'Merge Request Hook' })).toEqual({
      kind: 'other',
      name: 'Merge Request Hook',
    });
  });

  it('prefers the Gitea event header over the GitHub one Gitea also sends', () => {
    const headers = { 'x-gitea-event': 'create', 'x-github-event': 'push' };
    expect(classifyEvent('gitea', headers)).toEqual({ kind: 'other', name: 'create' });
  });

  it('treats a request without an event header as a push', () => {
    expect(classifyEvent('generic', {})).toEqual({ kind: 'push' });
  });
});

describe('parsePushRef', () => {
  it('reads the top-level ref of a push payload', () => {
    const github = { ref: 'refs/heads/main', repository: { full_name: 'o/r' }, commits: [] };
    const gitlab = { object_kind: 'push', ref: 'refs/heads/dev', checkout_sha: 'abc' };
    expect(parsePushRef('github', JSON.stringify(github))).toEqual({ ok: true, ref: 'refs/heads/main' });
    expect(parsePushRef('gitlab', Buffer.from(JSON.stringify(gitlab)))).toEqual({
      ok: true,
      ref: 'refs/heads/dev',
    });
  });

  it('requires a ref from the Git hosts', () => {
    expect(parsePushRef('github', '{"zen":"x"}')).toEqual({
      ok: false,
      error: 'push payload has no "ref" of the form refs/heads/<branch>',
    });
    expect(parsePushRef('gitea', '{"ref":"main"}').ok).toBe(false);
    expect(parsePushRef('gitlab', '[]')).toEqual({ ok: false, error: 'body is not a JSON object' });
    expect(parsePushRef('github', 'payload=%7B%7D').ok).toBe(false);
  });

  it('lets a generic sender omit the ref or the whole body', () => {
    expect(parsePushRef('generic', '')).toEqual({ ok: true, ref: undefined });
    expect(parsePushRef('generic', '{}')).toEqual({ ok: true, ref: undefined });
    expect(parsePushRef('generic', '{"ref":"refs/heads/x"}')).toEqual({ ok: true, ref: 'refs/heads/x' });
    expect(parsePushRef('generic', 'not json').ok).toBe(false);
  });
});

describe('branchRef', () => {
  it('expands a branch name and keeps a full ref', () => {
    expect(branchRef('main')).toBe('refs/heads/main');
    expect(branchRef('refs/heads/main')).toBe('refs/heads/main');
  });
});
