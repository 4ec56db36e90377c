/**
 * Slack incoming webhooks: `text` (the notification's fallback and preview) and `blocks` (a
 * header section, the reason, the facts as fields, a context line with the link), Slack's
 * mrkdwn with &, < and > escaped as Slack requires, links as <url|text>. Every mrkdwn text object
 * is `verbatim`: Slack then does not turn bare URLs, domain names, channel names or @here in a
 * tenant's text into links or mentions (its default preprocessing). Pure.
 */
import type { NotificationEvent, Severity } from '../event.ts';
import type { Message } from '../message.ts';
import type { Payload } from './payload.ts';

const EMOJI: Record<Severity, string> = { info: ':white_check_mark:', warning: ':warning:', error: ':x:' };
/** Slack refuses a section field longer than 2000 characters, and more than 10 fields. */
const MAX_FIELD_CHARS = 2000;
const MAX_FIELDS = 10;

export function slackPayload(event: NotificationEvent, message: Message): Payload {
  const title = `${EMOJI[event.severity]} *${escapeMrkdwn(message.title)}*`;
  const reason = escapeMrkdwn(message.reason);
  const blocks: unknown[] = [{ type: 'section', text: mrkdwn(`${title}\n${reason}`) }];
  if (message.facts.length > 0) {
    blocks.push({
      type: 'section',
      fields: message.facts
        .slice(0, MAX_FIELDS)
        .map((fact) =>
          mrkdwn(
            cut(
              `*${escapeMrkdwn(fact.label)}*\n${fact.url ? `<${fact.url}|${escapeMrkdwn(fact.value)}>` : escapeMrkdwn(fact.value)}`,
            ),
          ),
        ),
    });
  }
  if (message.link) {
    blocks.push({ type: 'context', elements: [mrkdwn(`<${message.link}|Details>`)] });
  }
  return {
    contentType: 'application/json',
    body: JSON.stringify({ text: escapeMrkdwn(`${message.title}: ${message.reason}`), blocks }),
  };
}

/** A mrkdwn text object that Slack shows as written: links only where Janus wrote <url|text>. */
function mrkdwn(text: string): { type: 'mrkdwn'; text: string; verbatim: true } {
  return { type: 'mrkdwn', text, verbatim: true };
}

/** Slack's three control characters in mrkdwn. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function cut(text: string): string {
  return text.length <= MAX_FIELD_CHARS ? text : `${text.slice(0, MAX_FIELD_CHARS - 1)}…`;
}
