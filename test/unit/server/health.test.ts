import { describe, expect, it } from 'vitest';
import { type NamedCheck, runChecks } from '../../../src/server/index.ts';

const ok = (name: string): NamedCheck => ({ name, check: () => ({ ok: true, detail: 'fine' }) });
const failing = (name: string, detail: string): NamedCheck => ({
  name,
  check: () => ({ ok: false, detail }),
});

describe('runChecks', () => {
  it('passes when every check passes, listing each one', () => {
    const report = runChecks('readyz', [ok('informers-synced'), ok('git-reachable')]);

    expect(report.ok).toBe(true);
    expect(report.text).toBe('[+]informers-synced ok\n[+]git-reachable ok\nreadyz check passed\n');
  });

  it('shows the note of a check that passed with something to know', () => {
    const suspended: NamedCheck = {
      name: 'git-reachable',
      check: () => ({ ok: true, detail: 'x', note: 'not checked: the Git side is suspended\nsince today' }),
    };
    expect(runChecks('readyz', [ok('informers-synced'), suspended]).text).toBe(
      '[+]informers-synced ok\n[+]git-reachable ok: not checked: the Git side is suspended since today\nreadyz check passed\n',
    );
  });

  it('fails when one check fails, naming it with its detail and still listing the others', () => {
    const report = runChecks('readyz', [
      ok('informers-synced'),
      failing('git-reachable', 'ECONNREFUSED'),
      ok('leader-or-standby'),
    ]);

    expect(report.ok).toBe(false);
    expect(report.text).toBe(
      '[+]informers-synced ok\n[-]git-reachable failed: ECONNREFUSED\n[+]leader-or-standby ok\nreadyz check failed\n',
    );
  });

  it('treats a check that throws as failed, with the error message', () => {
    const report = runChecks('readyz', [
      {
        name: 'informers-synced',
        check: () => {
          throw new Error('cache not started');
        },
      },
    ]);

    expect(report.ok).toBe(false);
    expect(report.text).toContain('[-]informers-synced failed: check threw: cache not started\n');
  });

  it('keeps each check on one line, whatever its detail holds', () => {
    const report = runChecks('readyz', [
      failing('git-reachable', 'first line\n  second line\r\n'),
      failing('x', ''),
    ]);

    expect(report.text).toBe(
      '[-]git-reachable failed: first line second line\n[-]x failed: no detail\nreadyz check failed\n',
    );
  });

  it('passes with no checks', () => {
    expect(runChecks('readyz', [])).toEqual({ ok: true, text: 'readyz check passed\n' });
  });
});
