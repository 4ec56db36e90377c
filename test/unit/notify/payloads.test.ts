/**
 * Each provider's payload against the shape its documentation gives (fixtures/README.md says
 * where each fixture is from), plus the rules of each format.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RESOLVE_AFTER_MS } from '../../../src/notify/config.ts';
import { type NotificationEvent, printableEvent } from '../../../src/notify/event.ts';
import { messageOf } from '../../../src/notify/message.ts';
import { alertmanagerPayload } from '../../../src/notify/payloads/alertmanager.ts';
import { cloudEventPayload, signature } from '../../../src/notify/payloads/cloudevents.ts';
import { teamsPayload } from '../../../src/notify/payloads/msteams.ts';
import { slackPayload } from '../../../src/notify/payloads/slack.ts';
import { AT, anEvent } from './events.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8'));

const LINKS = {
  transactionUrl: 'https://janus.example.com/t/{namespace}/{name}',
  commitUrl: 'https://git.example.com/c/{commit}',
};

/** Maps whose keys are the sender's own (CloudEvents data, Alertmanager labels and annotations). */
const FREE_FORM = new Set(['data', 'labels', 'annotations']);

/**
 * The paths where `ours` lacks what `documented` has, or has it with another JSON type. Each
 * element of a documented list must be matched by one of ours (of the same `type`, when it has
 * one: Block Kit blocks, Adaptive Card elements).
 */
function missing(documented: unknown, ours: unknown, path = '$'): string[] {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(documented) !== kind(ours)) return [`${path}: ${kind(ours)}, documented ${kind(documented)}`];
  if (FREE_FORM.has(path.split('.').at(-1) ?? '')) return [];
  if (Array.isArray(documented) && Array.isArray(ours)) {
    return documented.flatMap((element, i) => {
      const type = (element as { type?: unknown })?.type;
      const candidates = ours.filter(
        (o) => typeof type !== 'string' || (o as { type?: unknown })?.type === type,
      );
      const fits = candidates.some((o) => missing(element, o, `${path}[${i}]`).length === 0);
      return fits
        ? []
        : [
            `${path}[${i}]: no element like it${candidates[0] === undefined ? '' : `: ${missing(element, candidates[0], `${path}[${i}]`).join(', ')}`}`,
          ];
    });
  }
  if (kind(documented) === 'object') {
    const mine = ours as Record<string, unknown>;
    return Object.entries(documented as Record<string, unknown>).flatMap(([key, value]) =>
      key in mine ? missing(value, mine[key], `${path}.${key}`) : [`${path}.${key}: absent`],
    );
  }
  return [];
}

// biome-ignore lint/suspicious/noExplicitAny: a payload's JSON, read by path in assertions
function bodyOf(payload: { body: string }): any {
  return JSON.parse(payload.body);
}

const rolledBack = anEvent({ author: 'Ada <ada@example.com>' });
const message = messageOf(rolledBack, LINKS);

describe('CloudEvents (generic webhook)', () => {
  const payload = cloudEventPayload(rolledBack, message);
  const body = bodyOf(payload);

  it('is a structured-mode event of the documented shape', () => {
    expect(missing(fixture('cloudevents-structured.json'), body)).toEqual([]);
    expect(payload.contentType).toMatch(/^application\/cloudevents\+json/);
  });

  it('has the required attributes, non-empty, named as the spec allows', () => {
    expect(body).toMatchObject({
      specversion: '1.0',
      id: 'uid-42/RolledBack',
      source: '/apis/tx.janus.io/v1alpha1/namespaces/shop/transactions/release-42',
      type: 'io.janus.tx.transaction.rolledback',
      subject: 'shop/release-42',
      time: AT,
    });
    for (const name of Object.keys(body)) expect(name).toMatch(/^[a-z0-9]{1,20}$/);
    expect(body.data).toMatchObject({
      phase: 'RolledBack',
      severity: 'error',
      reason: rolledBack.reason,
      commit: rolledBack.commit,
      author: 'Ada <ada@example.com>',
      changes: 2,
      url: 'https://janus.example.com/t/shop/release-42',
    });
  });

  it('is signed over the exact body: the receiver recomputes X-Signature with the shared key', () => {
    const expected = `sha256=${createHmac('sha256', 'k3y').update(payload.body).digest('hex')}`;
    expect(signature(payload.body, 'k3y')).toBe(expected);
    expect(signature(`${payload.body} `, 'k3y')).not.toBe(expected);
  });
});

describe('Slack (incoming webhook)', () => {
  const body = bodyOf(slackPayload(rolledBack, message));

  it('has the documented shape: a fallback text and section, fields and context blocks', () => {
    expect(missing(fixture('slack-incoming-webhook.json'), body)).toEqual([]);
    expect(body.text).toBe(`shop/release-42: RolledBack: ${rolledBack.reason}`);
    expect(body.blocks[0].text.text).toBe(`:x: *shop/release-42: RolledBack*\n${rolledBack.reason}`);
    expect(body.blocks[1].fields.map((f: { text: string }) => f.text)).toEqual([
      `*Commit*\n<https://git.example.com/c/${rolledBack.commit}|a1b2c3d>`,
      '*Author*\nAda &lt;ada@example.com&gt;',
      '*Changes*\n2 changes (2/2 committed)',
      '*Directory*\ntransactions/release-42',
    ]);
    expect(body.blocks[2].elements[0].text).toBe('<https://janus.example.com/t/shop/release-42|Details>');
  });

  it("escapes &, < and > so a tenant's reason cannot make a link or a mention", () => {
    const hostile = anEvent({ reason: 'x <!channel> <https://evil.example|click> & more' });
    const text = bodyOf(slackPayload(hostile, messageOf(hostile, {}))).blocks[0].text.text as string;
    expect(text).toContain('x &lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; more');
    expect(text).not.toContain('<!channel>');
  });
});

describe('Microsoft Teams (incoming webhook / Workflows)', () => {
  const body = bodyOf(teamsPayload(rolledBack, message));

  it('is a message with one Adaptive Card attachment of the documented shape', () => {
    expect(missing(fixture('teams-adaptive-card-webhook.json'), body)).toEqual([]);
    const card = body.attachments[0].content;
    expect(card.body[0].inlines[0]).toMatchObject({
      type: 'TextRun',
      text: 'shop/release-42: RolledBack',
      color: 'Attention',
    });
    expect(card.body[2]).toEqual({
      type: 'RichTextBlock',
      inlines: [
        { type: 'TextRun', text: 'Commit: ', weight: 'Bolder' },
        {
          type: 'TextRun',
          text: 'a1b2c3d',
          selectAction: { type: 'Action.OpenUrl', url: `https://git.example.com/c/${rolledBack.commit}` },
        },
      ],
    });
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Details', url: 'https://janus.example.com/t/shop/release-42' },
    ]);
  });
});

/**
 * What a tenant (a reason, through a Transaction's status or a cancel annotation) or a pusher (the
 * author's name, file names, a rejection's errors) can put into a notification of a shared channel.
 */
const HOSTILE =
  '[approved](https://evil.example) https://evil.example www.evil.example <!channel> @here `x` <b>b</b>';
const hostile = printableEvent(
  anEvent({
    reason: `${HOSTILE} \u202edesrever`,
    author: '[Mallory](https://evil.example) <!here>',
    path: 'transactions/[p](https://evil.example)',
    errors: ['transactions/x/10.yaml:1: <https://evil.example|click>'],
  }),
);

describe('foreign text in every provider', () => {
  it('Slack: &, < and > escaped, and every mrkdwn object verbatim, so no bare URL becomes a link', () => {
    const body = bodyOf(slackPayload(hostile, messageOf(hostile, LINKS)));
    const objects = [body.blocks[0].text, ...body.blocks[1].fields, ...body.blocks[2].elements];
    for (const object of objects) expect(object).toMatchObject({ type: 'mrkdwn', verbatim: true });
    const all = JSON.stringify(body);
    for (const made of ['<!channel>', '<!here>', '<https://evil.example|click>', '<b>'])
      expect(all).not.toContain(made);
    expect(body.blocks[0].text.text).toContain('&lt;!channel&gt; @here `x` &lt;b&gt;b&lt;/b&gt; ?desrever');
  });

  it('Teams: every text a TextRun, shown without Markdown; no TextBlock or FactSet to render a link', () => {
    const card = bodyOf(teamsPayload(hostile, messageOf(hostile, LINKS))).attachments[0].content;
    expect(card.body.map((e: { type: string }) => e.type)).toEqual(
      Array(card.body.length).fill('RichTextBlock'),
    );
    const runs = card.body.flatMap((e: { inlines: unknown[] }) => e.inlines);
    for (const run of runs) expect(run).toMatchObject({ type: 'TextRun' });
    const texts = runs.map((r: { text: string }) => r.text);
    expect(texts).toContain(`${HOSTILE} ?desrever`);
    expect(texts).toContain('[Mallory](https://evil.example) <!here>');
    expect(texts).toContain('transactions/[p](https://evil.example)');
    // The only links are the platform team's templates: the commit and the details.
    const urls = JSON.stringify(card).match(/"url":"[^"]*"/g);
    expect(urls).toEqual([
      `"url":"https://git.example.com/c/${hostile.commit}"`,
      '"url":"https://janus.example.com/t/shop/release-42"',
    ]);
  });

  it('CloudEvents and Alertmanager carry the text as JSON strings, its bidi and control characters as "?"', () => {
    const data = bodyOf(cloudEventPayload(hostile, messageOf(hostile, LINKS))).data;
    expect(data.reason).toBe(`${HOSTILE} ?desrever`);
    const [, error] = bodyOf(
      alertmanagerPayload(hostile, messageOf(hostile, LINKS), DEFAULT_RESOLVE_AFTER_MS),
    );
    expect(error.annotations.description).toBe(`${HOSTILE} ?desrever`);
    expect(JSON.stringify(data) + JSON.stringify(error)).not.toContain('\u202e');
  });
});

describe('Alertmanager (POST /api/v2/alerts)', () => {
  const alerts = (event: NotificationEvent) =>
    bodyOf(alertmanagerPayload(event, messageOf(event, LINKS), DEFAULT_RESOLVE_AFTER_MS)) as {
      labels: Record<string, string>;
      annotations: Record<string, string>;
      startsAt: string;
      endsAt: string;
    }[];

  it('posts postableAlerts of the documented shape, labels and annotations all strings', () => {
    const body = alerts(rolledBack);
    expect(missing(fixture('alertmanager-postable-alerts.json'), body)).toEqual([]);
    for (const alert of body) {
      for (const value of [...Object.values(alert.labels), ...Object.values(alert.annotations)])
        expect(typeof value).toBe('string');
      expect(Date.parse(alert.endsAt)).toBeGreaterThanOrEqual(Date.parse(alert.startsAt));
    }
  });

  it('fires the alert of the event severity until resolveAfter, and resolves the other at once', () => {
    const [warning, error] = alerts(rolledBack);
    expect(error?.labels).toEqual({
      alertname: 'JanusTransaction',
      namespace: 'shop',
      transaction: 'release-42',
      severity: 'error',
    });
    expect(Date.parse(error?.endsAt ?? '') - Date.parse(AT)).toBe(DEFAULT_RESOLVE_AFTER_MS);
    expect(warning?.labels.severity).toBe('warning');
    expect(warning?.endsAt).toBe(AT);
  });

  it('resolves both when the transaction commits', () => {
    const committed = alerts(anEvent({ phase: 'Committed', severity: 'info' }));
    expect(committed.map((a) => a.endsAt)).toEqual([AT, AT]);
  });
});
