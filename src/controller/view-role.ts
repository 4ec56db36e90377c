/**
 * Where SOPS content may be applied, judged before anything is decrypted (stages/prepare.ts): a
 * kind the platform team allows (src/changes/sops-kinds.ts), and never one the cluster's live
 * `view` ClusterRole reads. `view` is aggregated: any ClusterRole labelled
 * rbac.authorization.k8s.io/aggregate-to-view adds its rules, as operators' charts do for their
 * custom resources, and every viewer of a namespace then reads those objects, decrypted values
 * included. The role is read with the controller's own identity (get on that one ClusterRole,
 * manifests/rbac) and kept a minute.
 */

import type { ChangeItem } from '../changes/change-context.ts';
import { kindName, sopsKindRefusal } from '../changes/sops-kinds.ts';
import type { KubeClient } from '../kube/client.ts';
import { isForbidden, isNotFound } from '../kube/errors.ts';
import { errorText } from '../log/index.ts';
import { type PolicyRule, rulesMayRead } from '../rollback-store/view-readable.ts';

/** How long the role read is used before it is read again. */
export const VIEW_ROLE_TTL_MS = 60_000;

export const VIEW_ROLE = 'view';

/** The rules, or why they could not be read. */
export type ViewRoleRead = { rules: PolicyRule[] } | { unreadable: string };

/** What sopsRefusal asks of the role. */
export interface ViewRules {
  read(): Promise<ViewRoleRead>;
}

type Read = ViewRoleRead;

export class ViewRole implements ViewRules {
  readonly #client: KubeClient;
  readonly #now: () => number;
  #cached: { at: number; read: Promise<Read> } | undefined;

  /** `client`: the controller's own identity. */
  constructor(client: KubeClient, now: () => number) {
    this.#client = client;
    this.#now = now;
  }

  /**
   * The live rules of ClusterRole view (its aggregated rules included). Refused or missing, it is
   * unreadable; any other error is thrown (the reconcile is retried) and not kept.
   */
  read(): Promise<Read> {
    const now = this.#now();
    if (this.#cached && now - this.#cached.at < VIEW_ROLE_TTL_MS) return this.#cached.read;
    const read = this.#client
      .request<{ rules?: PolicyRule[] }>({
        method: 'GET',
        path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${VIEW_ROLE}`,
      })
      .then(
        (role): Read => ({ rules: role.rules ?? [] }),
        (e: unknown): Read => {
          if (isForbidden(e) || isNotFound(e)) return { unreadable: errorText(e) };
          this.#cached = undefined;
          throw e;
        },
      );
    this.#cached = { at: now, read };
    return read;
  }
}

/**
 * Why one of the items' SOPS content may not be applied, naming the change; undefined when
 * every one may. `resourceOf` maps a kind to its resource (discovery).
 */
export async function sopsRefusal(
  items: readonly ChangeItem[],
  allowedKinds: readonly string[],
  viewRole: ViewRules,
  resourceOf: (apiVersion: string, kind: string) => Promise<string>,
): Promise<string | undefined> {
  for (const item of items) {
    if (item.change.sopsContent === undefined) continue;
    const { apiVersion, kind } = item.target;
    const where = `change ${item.index}`;
    const refused = sopsKindRefusal(apiVersion, kind, allowedKinds);
    if (refused) return `${where}: ${refused}`;
    const read = await viewRole.read();
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    if ('unreadable' in read) {
      if (group === '' && kind === 'Secret') continue; // the built-in view never reads Secrets
      return `${where}: the controller could not read ClusterRole ${VIEW_ROLE} to know whether every viewer of the namespace reads a ${kindName(apiVersion, kind)} (${read.unreadable}), so it applies no SOPS content to one: grant it get on that ClusterRole (manifests/rbac/cluster-role.yaml)`;
    }
    const resource = await resourceOf(apiVersion, kind);
    if (rulesMayRead(read.rules, group, resource)) {
      return `${where}: ClusterRole ${VIEW_ROLE} reads ${resource}${group ? ` of ${group}` : ''} (a ClusterRole aggregated into it grants that), so the decrypted content of this ${kindName(apiVersion, kind)} would be in clear to everyone who may view the namespace: encrypt a Secret and reference it`;
    }
  }
  return undefined;
}
