/** A Source's drift as a notification: its event, its message, and how CloudEvents and Alertmanager name it. */
import { describe, expect, it } from 'vitest';
import { driftEvent } from '../../../src/notify/event.ts';
import { messageOf } from '../../../src/notify/message.ts';
import { alertmanagerPayload } from '../../../src/notify/payloads/alertmanager.ts';
import { cloudEventPayload } from '../../../src/notify/payloads/cloudevents.ts';

const COMMIT = '3f2a9c1'.padEnd(40, '0');
const facts = (news: 'drifted' | 'resolved', count: number) => ({
  namespace: 'shop',
  source: 'web',
  news,
  count,
  message: count > 0 ? '1 object(s) differ from the render of 3f2a9c1' : 'the 2 live object(s) match',
  revision: COMMIT,
  checkedAt: '2026-11-28T12:00:00.000Z',
});

describe('driftEvent', () => {
  it('is a warning when drift is found and info when it is gone, about the Source, with the applied commit', () => {
    const drifted = driftEvent(facts('drifted', 1));
    expect(drifted).toMatchObject({
      id: 'source:shop/web/Drifted@2026-11-28T12:00:00.000Z',
      namespace: 'shop',
      name: 'web',
      phase: 'Drifted',
      severity: 'warning',
      changes: 1,
      commit: COMMIT,
    });
    expect(driftEvent(facts('resolved', 0))).toMatchObject({ phase: 'DriftResolved', severity: 'info' });
    const message = messageOf(drifted, {});
    expect(message.title).toBe('shop/web: Drifted');
    expect(message.facts).toContainEqual({ label: 'Drifted objects', value: '1' });
  });

  it('is a Source event for CloudEvents, and an alert labelled by source that DriftResolved resolves', () => {
    const drifted = driftEvent(facts('drifted', 1));
    const body = JSON.parse(String(cloudEventPayload(drifted, messageOf(drifted, {})).body));
    expect(body.type).toBe('io.janus.tx.source.drifted');
    expect(body.source).toBe('/apis/tx.janus.io/v1alpha1/namespaces/shop/sources/web');
    const resolved = driftEvent(facts('resolved', 0));
    const alerts = JSON.parse(String(alertmanagerPayload(resolved, messageOf(resolved, {}), 60_000).body));
    for (const alert of alerts) {
      expect(alert.labels.source).toBe('web');
      expect(alert.labels.transaction).toBeUndefined();
      expect(alert.endsAt).toBe(resolved.time); // info: every severity resolved
    }
  });
});
