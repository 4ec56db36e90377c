import { describe, expect, it } from 'vitest';
import {
  followed,
  type Interest,
  interestKey,
  interestQuery,
  matches,
  waitersFor,
} from '../../../src/controller/gate-interests.ts';

const pod = (name: string, labels: Record<string, string>) => ({
  metadata: { name, namespace: 'shop', labels },
});
const web: Interest = { by: 'selector', selector: { matchLabels: { app: 'web' } } };
const api: Interest = { by: 'selector', selector: { matchLabels: { app: 'api' } } };
const byName: Interest = { by: 'name', name: 'web' };

/** waiter → its interests, as the health gate keeps them for one watch. */
const interestsOf = (entries: Record<string, Interest[]>) =>
  new Map(Object.entries(entries).map(([w, is]) => [w, new Map(is.map((i) => [interestKey(i), i]))]));

describe('what a waiter of the health gate follows in a shared watch', () => {
  it('is a target by name, or a workload’s objects by its selector', () => {
    expect(matches(byName, pod('web', {}))).toBe(true);
    expect(matches(byName, pod('web-2', {}))).toBe(false);
    expect(matches(web, pod('web-abc', { app: 'web', 'pod-template-hash': 'abc' }))).toBe(true);
    expect(matches(web, pod('api-abc', { app: 'api' }))).toBe(false);
  });

  it('is listed apart by the same name or selector, to seed a watch that is already running', () => {
    expect(interestQuery(byName)).toEqual({ fieldSelector: 'metadata.name=web' });
    expect(interestQuery(web)).toEqual({ labelSelector: 'app=web' });
  });

  it('has a key that tells the same interest from another', () => {
    expect(interestKey({ by: 'selector', selector: { matchLabels: { app: 'web' } } })).toBe(interestKey(web));
    expect(interestKey(web)).not.toBe(interestKey(api));
    expect(interestKey(byName)).not.toBe(interestKey(web));
  });

  it('keeps in memory only objects some waiter follows', () => {
    const interests = interestsOf({ 'shop/rollout-1': [web], 'shop/rollout-2': [api] });
    expect(followed(interests, pod('web-1', { app: 'web' }))).toBe(true);
    expect(followed(interests, pod('api-1', { app: 'api' }))).toBe(true);
    expect(followed(interests, pod('batch-1', { app: 'batch' }))).toBe(false);
    expect(followed(new Map(), pod('web-1', { app: 'web' }))).toBe(false);
  });

  it('wakes only the waiters that follow the object, before or after its change', () => {
    const interests = interestsOf({
      'shop/rollout-1': [web, byName],
      'shop/rollout-2': [api],
      'shop/rollout-3': [web],
    });
    expect(waitersFor(interests, pod('web-1', { app: 'web' }))).toEqual(['shop/rollout-1', 'shop/rollout-3']);
    expect(waitersFor(interests, pod('batch-1', { app: 'batch' }))).toEqual([]);
    // Relabelled from api to batch: rollout-2 must hear that its pod left.
    expect(waitersFor(interests, pod('p', { app: 'api' }), pod('p', { app: 'batch' }))).toEqual([
      'shop/rollout-2',
    ]);
    expect(waitersFor(interests, undefined, pod('web', {}))).toEqual(['shop/rollout-1']);
  });
});
