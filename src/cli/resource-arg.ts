/**
 * `<type>/<name>` as kubectl reads it: the type a kind, a plural, a singular or a short name,
 * optionally with its group (`deployment.apps/web`, `deploy/web`, `configmaps/app-config`),
 * resolved through the API server's discovery.
 */
import type { KubeClient } from '../kube/client.ts';
import type { ObjectRef } from '../kube/resources.ts';
import { UsageError } from './command.ts';

interface ApiResource {
  name: string;
  singularName?: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
}

interface GroupList {
  groups: { name: string; preferredVersion: { groupVersion: string } }[];
}

export interface ResolvedResource {
  ref: Omit<ObjectRef, 'namespace'>;
  namespaced: boolean;
}

/** Splits "deployment.apps/web" into type "deployment", group "apps", name "web". */
export function parseResourceArg(arg: string): { type: string; group: string | undefined; name: string } {
  const slash = arg.indexOf('/');
  if (slash <= 0 || slash === arg.length - 1 || arg.indexOf('/', slash + 1) >= 0) {
    throw new UsageError(`expected <type>/<name>, e.g. deployment/web or configmap/app-config; got "${arg}"`);
  }
  const typePart = arg.slice(0, slash).toLowerCase();
  const dot = typePart.indexOf('.');
  return {
    type: dot < 0 ? typePart : typePart.slice(0, dot),
    group: dot < 0 ? undefined : typePart.slice(dot + 1),
    name: arg.slice(slash + 1),
  };
}

function matches(r: ApiResource, type: string): boolean {
  if (r.name.includes('/')) return false; // a subresource
  return [r.name, r.singularName, r.kind.toLowerCase(), ...(r.shortNames ?? [])].includes(type);
}

/** The first group version (core first, then /apis in the server's order) serving `type`. */
export async function resolveResource(client: KubeClient, arg: string): Promise<ResolvedResource> {
  const { type, group, name } = parseResourceArg(arg);
  const groupVersions: string[] = [];
  if (group === undefined || group === '' || group === 'core') groupVersions.push('v1');
  if (group !== '' && group !== 'core') {
    const list = await client.request<GroupList>({ method: 'GET', path: '/apis' });
    for (const g of list.groups) {
      if (group === undefined || g.name === group) groupVersions.push(g.preferredVersion.groupVersion);
    }
  }
  for (const gv of groupVersions) {
    const path = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
    const resources = await client.request<{ resources: ApiResource[] }>({ method: 'GET', path });
    const found = resources.resources.find((r) => matches(r, type));
    if (found) return { ref: { apiVersion: gv, kind: found.kind, name }, namespaced: found.namespaced };
  }
  throw new UsageError(
    `the server has no resource type "${type}"${group ? ` in group ${group}` : ''} (as in kubectl api-resources)`,
  );
}
