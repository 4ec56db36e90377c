/** What GitHub sends to janus run's webhook after a push to main, signed with the shared secret. */
import { createHmac, randomUUID } from 'node:crypto';

export async function deliverGithubPush(opsUrl: string, commit: string, secret: string): Promise<void> {
  const body = JSON.stringify({ ref: 'refs/heads/main', after: commit });
  const response = await fetch(`${opsUrl}/webhook/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });
  if (response.status !== 202)
    throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
}
