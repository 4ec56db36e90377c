/**
 * The notification settings the platform team writes (a ConfigMap mounted into the controller):
 * providers, each an address only this file can name, and routes from events to providers,
 * after Flux's Provider and Alert. Tenants write none of it, so no tenant can make the
 * controller send anything anywhere, nor receive another tenant's events. Pure.
 */
import { tryParseDuration } from '../api/duration.ts';
import { formatDiagnostic } from '../yaml/diagnostic.ts';
import { parseYamlFile } from '../yaml/yaml-file.ts';
import { isNotifiedPhase, NOTIFIED_PHASES, type NotifiedPhase, SEVERITIES, type Severity } from './event.ts';

export const PROVIDER_TYPES = ['cloudevents', 'slack', 'msteams', 'alertmanager'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

export interface ProviderConfig {
  name: string;
  type: ProviderType;
  /** The URL, here or (when it is itself a secret, as Slack's and Teams' are) in `addressFile`. */
  address?: string;
  /** A file holding the URL, re-read at every delivery. */
  addressFile?: string;
  /** cloudevents: the HMAC-SHA256 key's file, re-read at every delivery. */
  secretFile?: string;
  /** alertmanager: a firing alert ends after this long unless the transaction recovers first. */
  resolveAfterMs: number;
  /** One request gives up after this long. */
  timeoutMs: number;
}

export interface RouteConfig {
  name: string;
  /** Namespace names or globs (`*`, `?`); empty: every namespace. */
  namespaces: string[];
  /** Empty: every notified phase. */
  phases: NotifiedPhase[];
  /** The least severity that passes (Flux's eventSeverity). */
  severity: Severity;
  providers: string[];
}

export interface NotifyConfig {
  /** `{namespace}`, `{name}`, `{uid}`, `{phase}`: where a human reads the details. */
  transactionUrl?: string;
  /** `{commit}`, `{shortCommit}`: the source commit on the forge. */
  commitUrl?: string;
  providers: ProviderConfig[];
  routes: RouteConfig[];
}

/** Alertmanager alerts end on their own after this long (Janus sends each alert once). */
export const DEFAULT_RESOLVE_AFTER_MS = 24 * 3600_000;
/** A delivery request gives up after this long. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The most a provider's `timeout` may be: a slow receiver must not hold its queue for long. */
export const MAX_TIMEOUT_MS = 60_000;

export const EMPTY_CONFIG: NotifyConfig = { providers: [], routes: [] };

export class NotifyConfigError extends Error {
  override readonly name = 'NotifyConfigError';
}

/** Parses the file's text; throws NotifyConfigError naming the file, line or field. */
export function parseNotifyConfig(file: string, text: string): NotifyConfig {
  const { documents, diagnostics } = parseYamlFile(file, text);
  if (diagnostics.length > 0) throw new NotifyConfigError(diagnostics.map(formatDiagnostic).join('; '));
  const root = record(documents[0]?.value ?? {}, 'the file');
  known(root, ['transactionUrl', 'commitUrl', 'providers', 'routes'], 'the file');
  const providers = list(root.providers, 'providers').map((p, i) => provider(p, `providers[${i}]`));
  const names = new Set<string>();
  for (const p of providers) {
    if (names.has(p.name)) throw new NotifyConfigError(`providers: "${p.name}" is named twice`);
    names.add(p.name);
  }
  const routes = list(root.routes, 'routes').map((r, i) => route(r, `routes[${i}]`, names));
  return {
    ...(root.transactionUrl !== undefined && {
      transactionUrl: urlTemplate(root.transactionUrl, 'transactionUrl'),
    }),
    ...(root.commitUrl !== undefined && { commitUrl: urlTemplate(root.commitUrl, 'commitUrl') }),
    providers,
    routes,
  };
}

function provider(value: unknown, at: string): ProviderConfig {
  const p = record(value, at);
  known(p, ['name', 'type', 'address', 'addressFile', 'secretFile', 'resolveAfter', 'timeout'], at);
  const name = text(p.name, `${at}.name`);
  const type = text(p.type, `${at}.type`);
  if (!(PROVIDER_TYPES as readonly string[]).includes(type))
    throw new NotifyConfigError(`${at}.type: "${type}" is not one of ${PROVIDER_TYPES.join(', ')}`);
  if ((p.address === undefined) === (p.addressFile === undefined))
    throw new NotifyConfigError(`${at}: give exactly one of address and addressFile`);
  if (p.address !== undefined) checkAddress(text(p.address, `${at}.address`), `${at}.address`);
  if (type === 'cloudevents' && p.secretFile === undefined)
    throw new NotifyConfigError(
      `${at}.secretFile: a cloudevents provider signs its requests: name the key's file`,
    );
  const timeoutMs = duration(p.timeout, `${at}.timeout`, DEFAULT_TIMEOUT_MS);
  if (timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS)
    throw new NotifyConfigError(`${at}.timeout: between 1ms and ${MAX_TIMEOUT_MS / 1000}s`);
  return {
    name,
    type: type as ProviderType,
    ...(p.address !== undefined && { address: text(p.address, `${at}.address`) }),
    ...(p.addressFile !== undefined && { addressFile: text(p.addressFile, `${at}.addressFile`) }),
    ...(p.secretFile !== undefined && { secretFile: text(p.secretFile, `${at}.secretFile`) }),
    resolveAfterMs: duration(p.resolveAfter, `${at}.resolveAfter`, DEFAULT_RESOLVE_AFTER_MS),
    timeoutMs,
  };
}

function route(value: unknown, at: string, providers: ReadonlySet<string>): RouteConfig {
  const r = record(value, at);
  known(r, ['name', 'namespaces', 'phases', 'severity', 'providers'], at);
  const phases = list(r.phases, `${at}.phases`).map((p, i) => text(p, `${at}.phases[${i}]`));
  const bad = phases.find((p) => !isNotifiedPhase(p));
  if (bad !== undefined)
    throw new NotifyConfigError(`${at}.phases: "${bad}" is not one of ${NOTIFIED_PHASES.join(', ')}`);
  const severity = r.severity === undefined ? 'info' : text(r.severity, `${at}.severity`);
  if (!(SEVERITIES as readonly string[]).includes(severity))
    throw new NotifyConfigError(`${at}.severity: "${severity}" is not one of ${SEVERITIES.join(', ')}`);
  const targets = list(r.providers, `${at}.providers`).map((p, i) => text(p, `${at}.providers[${i}]`));
  if (targets.length === 0) throw new NotifyConfigError(`${at}.providers: name at least one provider`);
  const unknown = targets.find((t) => !providers.has(t));
  if (unknown !== undefined)
    throw new NotifyConfigError(`${at}.providers: no provider is named "${unknown}"`);
  return {
    name: r.name === undefined ? at : text(r.name, `${at}.name`),
    namespaces: list(r.namespaces, `${at}.namespaces`).map((n, i) => text(n, `${at}.namespaces[${i}]`)),
    phases: phases as NotifiedPhase[],
    severity: severity as Severity,
    providers: targets,
  };
}

/** http(s) only, no credentials in the URL (they would be logged): SSRF is the platform's own choice here. */
export function checkAddress(address: string, at: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new NotifyConfigError(`${at}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new NotifyConfigError(`${at}: only http and https addresses`);
  if (url.username || url.password) throw new NotifyConfigError(`${at}: no credentials in the URL`);
  return url;
}

function urlTemplate(value: unknown, at: string): string {
  const template = text(value, at);
  checkAddress(template.replace(/\{[a-zA-Z]+\}/g, 'x'), at);
  return template;
}

function duration(value: unknown, at: string, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = tryParseDuration(text(value, at));
  if (ms === undefined) throw new NotifyConfigError(`${at}: not a duration such as 10s, 5m, 24h`);
  return ms;
}

function record(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new NotifyConfigError(`${at}: expected a mapping`);
  return value as Record<string, unknown>;
}

function list(value: unknown, at: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new NotifyConfigError(`${at}: expected a list`);
  return value;
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string' || value === '')
    throw new NotifyConfigError(`${at}: expected a non-empty string`);
  return value;
}

function known(value: Record<string, unknown>, keys: readonly string[], at: string): void {
  const extra = Object.keys(value).find((k) => !keys.includes(k));
  if (extra !== undefined)
    throw new NotifyConfigError(`${at}: unknown field "${extra}" (known: ${keys.join(', ')})`);
}
