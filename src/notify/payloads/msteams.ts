/**
 * Microsoft Teams (incoming webhooks and Workflows' "post to a channel when a webhook request
 * is received"): a `message` whose one attachment is an Adaptive Card 1.2 (the version the
 * Teams documentation's webhook example uses): the title, the reason, a FactSet, and an
 * Action.OpenUrl to the details. Pure.
 */
import type { NotificationEvent, Severity } from '../event.ts';
import type { Message } from '../message.ts';
import type { Payload } from './payload.ts';

const COLOR: Record<Severity, string> = { info: 'Good', warning: 'Warning', error: 'Attention' };

export function teamsPayload(event: NotificationEvent, message: Message): Payload {
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.2',
    body: [
      {
        type: 'TextBlock',
        text: message.title,
        weight: 'Bolder',
        size: 'Medium',
        color: COLOR[event.severity],
        wrap: true,
      },
      { type: 'TextBlock', text: message.reason, wrap: true },
      {
        type: 'FactSet',
        facts: message.facts.map((f) => ({
          title: f.label,
          value: f.url ? `[${f.value}](${f.url})` : f.value,
        })),
      },
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
