import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_POLL_REQUESTED_AT,
  ANNOTATION_SUSPEND,
  ANNOTATION_SUSPEND_REASON,
  ANNOTATION_SUSPENDED_AT,
  ANNOTATION_SUSPENDED_BY,
  describeSuspension,
  gitControlConfigMapName,
  gitSideStateOf,
  recordedPollOf,
  recordPollData,
  renderGitControl,
  suspensionOf,
} from '../../../src/gitops/git-control.ts';
import { describePoll } from '../../../src/gitops/git-side.ts';
import { cursorConfigMapName } from '../../../src/gitops/state.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const source = { repository: 'https://git.example.com/org/deploys', branch: 'main', root: 'transactions' };

function control(annotations: Record<string, string> = {}, data: Record<string, string> = {}): KubeObject {
  const object = renderGitControl('janus-system', source);
  return {
    ...object,
    metadata: { ...object.metadata, annotations },
    data: { ...(object.data as Record<string, string>), ...data },
  };
}

describe('the Git-side control ConfigMap', () => {
  it('shares the hash of the cursor ConfigMap of the same repository, branch and folder', () => {
    expect(gitControlConfigMapName(source)).toBe(
      cursorConfigMapName(source).replace('janus-git-state-', 'janus-git-control-'),
    );
    expect(gitControlConfigMapName({ ...source, branch: 'prod' })).not.toBe(gitControlConfigMapName(source));
  });

  it('reads a suspension with its reason, time and author', () => {
    const object = control({
      [ANNOTATION_SUSPEND]: 'true',
      [ANNOTATION_SUSPEND_REASON]: 'change freeze',
      [ANNOTATION_SUSPENDED_AT]: '2026-11-24T05:00:00Z',
      [ANNOTATION_SUSPENDED_BY]: 'alice',
    });
    const suspension = suspensionOf(object);
    expect(suspension).toEqual({ reason: 'change freeze', since: '2026-11-24T05:00:00Z', by: 'alice' });
    expect(describeSuspension(suspension ?? {})).toBe(
      'suspended since 2026-11-24T05:00:00Z by alice: change freeze',
    );
  });

  it.each([
    ['true', true],
    ['yes', true], // a typo suspends rather than applies: the safe reading
    ['', true],
    ['false', false],
    [' False ', false],
  ])('reads %j as suspended: %s', (value, suspended) => {
    expect(suspensionOf(control({ [ANNOTATION_SUSPEND]: value })) !== undefined).toBe(suspended);
  });

  it('is active without the annotation, and without the object', () => {
    expect(suspensionOf(control())).toBeUndefined();
    expect(suspensionOf(undefined)).toBeUndefined();
    expect(describeSuspension({})).toBe('suspended');
  });

  it('tells a pending poll request from an answered one', () => {
    const asked = control({ [ANNOTATION_POLL_REQUESTED_AT]: '2026-11-24T05:00:01.000Z' });
    expect(gitSideStateOf(asked).pendingPollRequest).toBe('2026-11-24T05:00:01.000Z');
    const answered = control(
      { [ANNOTATION_POLL_REQUESTED_AT]: '2026-11-24T05:00:01.000Z' },
      recordPollData({
        request: '2026-11-24T05:00:01.000Z',
        at: '2026-11-24T05:00:02.000Z',
        commit: 'a'.repeat(40),
        result: '1 new commit, 1 materialized',
        ok: true,
      }) as Record<string, string>,
    );
    const state = gitSideStateOf(answered);
    expect(state.pendingPollRequest).toBeUndefined();
    expect(state).toMatchObject({ repository: source.repository, branch: 'main', root: 'transactions' });
    expect(state.lastPoll).toEqual({
      request: '2026-11-24T05:00:01.000Z',
      at: '2026-11-24T05:00:02.000Z',
      commit: 'a'.repeat(40),
      result: '1 new commit, 1 materialized',
      ok: true,
    });
  });

  it('records a failed poll without a commit, and clears what the previous record had', () => {
    const data = recordPollData({ at: '2026-11-24T05:00:02.000Z', result: 'fetch failed', ok: false });
    expect(data).toEqual({
      lastHandledPollRequest: null,
      lastPollAt: '2026-11-24T05:00:02.000Z',
      lastPollCommit: null,
      lastPollResult: 'fetch failed',
      lastPollOk: 'false',
    });
    const strings = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== null)) as Record<
      string,
      string
    >;
    expect(recordedPollOf(control({}, strings))).toEqual({
      at: '2026-11-24T05:00:02.000Z',
      result: 'fetch failed',
      ok: false,
    });
    expect(recordedPollOf(control())).toBeUndefined();
  });
});

describe('describePoll', () => {
  const summary = {
    tip: 'a'.repeat(40),
    history: 'linear' as const,
    commits: 2,
    materialized: 1,
    rejected: 1,
    notices: 0,
    rollbacks: 1,
    baseline: 0,
  };

  it('says what a poll did, leaving out what it did not do', () => {
    expect(describePoll(summary)).toBe('2 new commits, 1 materialized, 1 rejected, 1 rollback request');
    expect(describePoll({ ...summary, commits: 1, rejected: 0, rollbacks: 0 })).toBe(
      '1 new commit, 1 materialized',
    );
    expect(describePoll({ ...summary, history: 'idle', commits: 0 })).toBe('nothing new');
    expect(describePoll({ ...summary, history: 'baseline', baseline: 3 })).toBe(
      'first run: 3 directories recorded as baseline',
    );
  });
});
