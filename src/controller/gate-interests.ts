/**
 * Which objects of a shared watch a waiter of the health gate follows. One watch serves one kind
 * in one namespace (its collection path) for every waiter; each waiter registers interests in it
 * (a target by name, a workload's pods or ReplicaSets by its selector), and the watch keeps, and
 * wakes waiters for, only the objects some interest matches. Pure: no I/O.
 */
import { type LabelSelector, selectorString, selects } from '../kube/label-selector.ts';
import type { KubeObject } from '../kube/resources.ts';

export type Interest =
  | { readonly by: 'name'; readonly name: string }
  | { readonly by: 'selector'; readonly selector: LabelSelector };

/** The same interest gives the same key: it says whether a waiter already follows it. */
export function interestKey(interest: Interest): string {
  return interest.by === 'name' ? `name=${interest.name}` : `selector=${selectorString(interest.selector)}`;
}

/** Whether `obj` is one the interest follows (objects of the watch's kind and namespace). */
export function matches(interest: Interest, obj: Pick<KubeObject, 'metadata'>): boolean {
  return interest.by === 'name'
    ? obj.metadata.name === interest.name
    : selects(interest.selector, obj.metadata.labels);
}

/** The query that lists just what an interest follows (to seed a watch already running). */
export function interestQuery(interest: Interest): { fieldSelector?: string; labelSelector?: string } {
  return interest.by === 'name'
    ? { fieldSelector: `metadata.name=${interest.name}` }
    : { labelSelector: selectorString(interest.selector) };
}

/** Every interest of every waiter of one watch. */
export type Interests = ReadonlyMap<string, ReadonlyMap<string, Interest>>;

/** Whether any waiter follows `obj`: the watch keeps only such objects in memory. */
export function followed(interests: Interests, obj: Pick<KubeObject, 'metadata'>): boolean {
  for (const own of interests.values()) for (const i of own.values()) if (matches(i, obj)) return true;
  return false;
}

/** The waiters to wake for a change from `old` to `obj` (either may be undefined). */
export function waitersFor(
  interests: Interests,
  ...states: (Pick<KubeObject, 'metadata'> | undefined)[]
): string[] {
  const out: string[] = [];
  for (const [waiter, own] of interests)
    for (const i of own.values())
      if (states.some((s) => s !== undefined && matches(i, s))) {
        out.push(waiter);
        break;
      }
  return out;
}
