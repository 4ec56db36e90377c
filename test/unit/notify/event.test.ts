import { describe, expect, it } from 'vitest';
import { eventFromRecord, PHASE_SEVERITY } from '../../../src/notify/event.ts';
import { renderIgnoredEdit, renderRejection } from '../../../src/results/render-directory.ts';
import { renderTransactionResult } from '../../../src/results/render-transaction.ts';
import { AT, anEvent, aRolledBack, CONTEXT, SOURCE_SHA } from './events.ts';

const NOW = new Date(AT);

describe('eventFromRecord: the event is what the result record says', () => {
  it('reads a rolled-back transaction from its results-branch record', () => {
    const event = eventFromRecord(renderTransactionResult(aRolledBack(), CONTEXT), NOW);
    expect(event).toEqual(anEvent());
  });

  it('reads a rejected directory with its file and line, identified by its commit', () => {
    const record = renderRejection(
      {
        namespace: 'shop',
        name: 'release-43',
        source: { repository: 'r', revision: `main@sha1:${SOURCE_SHA}`, path: 'transactions/release-43' },
      },
      [
        {
          file: 'transactions/release-43/10-web.yaml',
          line: 7,
          column: 3,
          code: 'yaml-syntax',
          message: 'bad indentation',
        },
      ],
      CONTEXT,
    );
    const event = eventFromRecord(record, NOW);
    expect(event).toMatchObject({
      id: `shop/release-43@${SOURCE_SHA}/Rejected`,
      phase: 'Rejected',
      severity: 'error',
      reason: 'the directory is invalid; nothing was applied',
      errors: ['transactions/release-43/10-web.yaml:7: bad indentation'],
    });
    expect(event?.uid).toBeUndefined();
  });

  it('notifies nothing for a notice, a Pending record or a phase under way', () => {
    const dir = { namespace: 'shop', name: 'x', source: {} };
    expect(eventFromRecord(renderIgnoredEdit(dir), NOW)).toBeUndefined();
    const pending = aRolledBack();
    pending.status = { phase: 'Committing' };
    expect(eventFromRecord(renderTransactionResult(pending, CONTEXT), NOW)).toBeUndefined();
  });

  it('has the documented severity table', () => {
    expect(PHASE_SEVERITY).toEqual({
      Committed: 'info',
      RollingBack: 'warning',
      RolledBack: 'error',
      Failed: 'error',
      Rejected: 'error',
      Drifted: 'warning',
      DriftResolved: 'info',
    });
  });
});
