/**
 * Which providers an event goes to: every route whose namespaces, phases and least severity it
 * passes, each provider once however many routes name it. Pure.
 */
import { globMatches } from '../text/glob.ts';
import type { NotifyConfig, ProviderConfig, RouteConfig } from './config.ts';
import { type NotificationEvent, SEVERITIES } from './event.ts';

export function providersFor(event: NotificationEvent, config: NotifyConfig): ProviderConfig[] {
  const names = new Set(config.routes.filter((r) => routePasses(r, event)).flatMap((r) => r.providers));
  return config.providers.filter((p) => names.has(p.name));
}

export function routePasses(route: RouteConfig, event: NotificationEvent): boolean {
  return (
    (route.namespaces.length === 0 || route.namespaces.some((glob) => globMatches(glob, event.namespace))) &&
    (route.phases.length === 0 || route.phases.includes(event.phase)) &&
    SEVERITIES.indexOf(event.severity) >= SEVERITIES.indexOf(route.severity)
  );
}
