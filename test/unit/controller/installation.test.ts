import { describe, expect, it } from 'vitest';
import { LABEL_INSTANCE } from '../../../src/api/v1alpha1/index.ts';
import { UsageError } from '../../../src/cli/command.ts';
import { instanceFlag } from '../../../src/cli/instance-flag.ts';
import {
  DEFAULT_LEADER_ELECTION_ID,
  handles,
  instanceOf,
  instanceProblem,
  leaderElectionId,
  MAX_INSTANCE_LENGTH,
  transactionSelector,
  withInstanceLabel,
} from '../../../src/controller/installation.ts';
import { cursorConfigMapName } from '../../../src/gitops/state.ts';

describe('the Transactions an installation handles', () => {
  it('are those without the label for the default installation, those with its name for another', () => {
    expect(transactionSelector(undefined)).toBe('!tx.janus.io/instance');
    expect(transactionSelector('team-a')).toBe('tx.janus.io/instance=team-a');
  });

  it('agree with the selector on labels', () => {
    expect(handles(undefined, undefined)).toBe(true);
    expect(handles(undefined, { team: 'shop' })).toBe(true);
    expect(handles(undefined, { [LABEL_INSTANCE]: 'team-a' })).toBe(false);
    // An empty value is a value: `!key` does not select it, so the default installation does not either.
    expect(handles(undefined, { [LABEL_INSTANCE]: '' })).toBe(false);
    expect(handles('team-a', { [LABEL_INSTANCE]: 'team-a' })).toBe(true);
    expect(handles('team-a', { [LABEL_INSTANCE]: 'team-b' })).toBe(false);
    expect(handles('team-a', undefined)).toBe(false);
  });
});

describe('an instance name', () => {
  it('is unset when empty, so JANUS_INSTANCE="" is the default installation', () => {
    expect(instanceOf(undefined)).toBeUndefined();
    expect(instanceOf('')).toBeUndefined();
    expect(instanceOf('team-a')).toBe('team-a');
  });

  it('is refused at start as a usage error naming --instance', () => {
    expect(instanceFlag('')).toBeUndefined();
    expect(instanceFlag('blue')).toBe('blue');
    expect(() => instanceFlag('Blue')).toThrow(UsageError);
    expect(() => instanceFlag('Blue')).toThrow(/^--instance: lowercase letters/);
  });

  it('is a DNS label of at most 63 characters (a label value that also fits a Lease name)', () => {
    expect(instanceProblem('team-a')).toBeUndefined();
    expect(instanceProblem('a'.repeat(MAX_INSTANCE_LENGTH))).toBeUndefined();
    expect(instanceProblem('a'.repeat(MAX_INSTANCE_LENGTH + 1))).toBe(
      'at most 63 characters (a label value), got 64',
    );
    for (const bad of ['Team', 'team_a', '-a', 'a-', 'a.b', 'a/b', ' a'])
      expect(instanceProblem(bad), bad).toMatch(/^lowercase letters, digits and '-'/);
  });
});

describe('what an installation creates from Git', () => {
  it('carries its own instance label, whatever the directory asked for', () => {
    expect(withInstanceLabel({ team: 'shop', [LABEL_INSTANCE]: 'elsewhere' }, 'team-a')).toEqual({
      team: 'shop',
      [LABEL_INSTANCE]: 'team-a',
    });
    expect(withInstanceLabel(undefined, 'team-a')).toEqual({ [LABEL_INSTANCE]: 'team-a' });
  });

  it('carries none from the default installation, so the default installation handles it', () => {
    expect(withInstanceLabel({ team: 'shop', [LABEL_INSTANCE]: 'elsewhere' }, undefined)).toEqual({
      team: 'shop',
    });
    expect(withInstanceLabel({ [LABEL_INSTANCE]: 'elsewhere' }, undefined)).toBeUndefined();
    expect(withInstanceLabel(undefined, undefined)).toBeUndefined();
  });
});

describe('the names an installation gives its own objects', () => {
  it('leader Lease: the explicit one, else janus-controller, suffixed by the instance', () => {
    expect(leaderElectionId(undefined, undefined)).toBe(DEFAULT_LEADER_ELECTION_ID);
    expect(leaderElectionId(undefined, 'team-a')).toBe('janus-controller-team-a');
    expect(leaderElectionId('janus-staging-controller', 'team-a')).toBe('janus-staging-controller');
    expect(leaderElectionId('', undefined)).toBe('janus-controller');
  });

  it('Git cursor: unchanged for the default installation, its own for each instance', () => {
    const source = { repository: 'https://git.example/changes', branch: 'main', root: 'transactions' };
    // The name it had before instances existed: upgrading keeps the cursor.
    expect(cursorConfigMapName(source)).toBe('janus-git-state-9a7db6d22e78b65e');
    const a = cursorConfigMapName({ ...source, instance: 'a' });
    expect(a).toMatch(/^janus-git-state-[0-9a-f]{16}$/);
    expect(a).not.toBe(cursorConfigMapName(source));
    expect(a).not.toBe(cursorConfigMapName({ ...source, instance: 'b' }));
  });
});
