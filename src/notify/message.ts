/**
 * What a notification says, the same in every provider: a headline (transaction and phase), the
 * reason in one line, then the facts (commit, author, changes) and the links. Pure.
 */
import type { NotifyConfig } from './config.ts';
import { DRIFT_PHASES, type NotificationEvent } from './event.ts';

export interface Message {
  /** e.g. "shop/release-42: RolledBack". */
  title: string;
  reason: string;
  /** Label → value, in display order; only what the event knows. */
  facts: { label: string; value: string; url?: string }[];
  /** Where the details are, when `transactionUrl` is set. */
  link?: string;
}

export const SHORT_SHA = 7;

export function messageOf(
  event: NotificationEvent,
  config: Pick<NotifyConfig, 'transactionUrl' | 'commitUrl'>,
): Message {
  const facts: Message['facts'] = [];
  if (event.commit) {
    const url = fill(config.commitUrl, event);
    facts.push({ label: 'Commit', value: event.commit.slice(0, SHORT_SHA), ...(url && { url }) });
  }
  if (event.author) facts.push({ label: 'Author', value: event.author });
  if (DRIFT_PHASES.includes(event.phase))
    facts.push({ label: 'Drifted objects', value: String(event.changes) });
  else if (event.phase !== 'Rejected') facts.push({ label: 'Changes', value: describeChanges(event) });
  if (event.errors.length > 0) facts.push({ label: 'Errors', value: event.errors.join('\n') });
  if (event.path) facts.push({ label: 'Directory', value: event.path });
  const link = fill(config.transactionUrl, event);
  return {
    title: `${event.namespace}/${event.name}: ${event.phase}`,
    reason: event.reason,
    facts,
    ...(link && { link }),
  };
}

function describeChanges(event: NotificationEvent): string {
  const total = `${event.changes} ${event.changes === 1 ? 'change' : 'changes'}`;
  return event.progress ? `${total} (${event.progress} committed)` : total;
}

/** The template with `{field}` replaced, each value URL-encoded; undefined without a template. */
export function fill(template: string | undefined, event: NotificationEvent): string | undefined {
  if (template === undefined) return undefined;
  const values: Record<string, string | undefined> = {
    namespace: event.namespace,
    name: event.name,
    uid: event.uid,
    phase: event.phase,
    commit: event.commit,
    shortCommit: event.commit?.slice(0, SHORT_SHA),
  };
  return template.replace(/\{([a-zA-Z]+)\}/g, (whole, key: string) =>
    Object.hasOwn(values, key) ? encodeURIComponent(values[key] ?? '') : whole,
  );
}
