/**
 * Microsoft Teams (incoming webhooks and Workflows' "post to a channel when a webhook request
 * is received"): a `message` whose one attachment is an Adaptive Card 1.2 (the version the
 * Teams documentation's webhook example uses): the title, the reason, one line per fact, and an
 * Action.OpenUrl to the details. Every text is a TextRun in a RichTextBlock, never a TextBlock
 * or a FactSet: those render Markdown, so a tenant's reason, an author's name or a file name
 * would make links there, and Teams' clients do not agree on backslash escapes; a TextRun is
 * shown as written ("Markdown is not supported"). The commit's link is the TextRun's
 * selectAction, its URL the platform team's template. Pure.
 */
import type { NotificationEvent, Severity } from '../event.ts';
import type { Message } from '../message.ts';
import type { Payload } from './payload.ts';

const COLOR: Record<Severity, string> = { info: 'Good', warning: 'Warning', error: 'Attention' };

/** A line of TextRuns: text without Markdown. */
const line = (...inlines: Record<string, unknown>[]) => ({
  type: 'RichTextBlock',
  inlines: inlines.map((run) => ({ type: 'TextRun', ...run })),
});

export function teamsPayload(event: NotificationEvent, message: Message): Payload {
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.2',
    body: [
      line({ text: message.title, weight: 'Bolder', size: 'Medium', color: COLOR[event.severity] }),
      line({ text: message.reason }),
      ...message.facts.map((f) =>
        line(
          { text: `${f.label}: `, weight: 'Bolder' },
          { text: f.value, ...(f.url && { selectAction: { type: 'Action.OpenUrl', url: f.url } }) },
        ),
      ),
    ],
    ...(message.link && { actions: [{ type: 'Action.OpenUrl', title: 'Details', url: message.link }] }),
  };
  return {
    contentType: 'application/json',
    body: JSON.stringify({
      type: 'message',
      attachments: [
        { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card },
      ],
    }),
  };
}
