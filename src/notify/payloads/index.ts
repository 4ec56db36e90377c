/** The payload of each provider type, from the one event and message. Pure. */
import type { ProviderConfig } from '../config.ts';
import type { NotificationEvent } from '../event.ts';
import type { Message } from '../message.ts';
import { alertmanagerPayload } from './alertmanager.ts';
import { cloudEventPayload } from './cloudevents.ts';
import { teamsPayload } from './msteams.ts';
import type { Payload } from './payload.ts';
import { slackPayload } from './slack.ts';

export { SIGNATURE_HEADER, signature } from './cloudevents.ts';
export type { Payload } from './payload.ts';

export function payloadFor(provider: ProviderConfig, event: NotificationEvent, message: Message): Payload {
  switch (provider.type) {
    case 'cloudevents':
      return cloudEventPayload(event, message);
    case 'slack':
      return slackPayload(event, message);
    case 'msteams':
      return teamsPayload(event, message);
    case 'alertmanager':
      return alertmanagerPayload(event, message, provider.resolveAfterMs);
  }
}
