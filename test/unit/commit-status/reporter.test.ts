/**
 * The reporter against an in-memory forge that keeps statuses like GitHub's combined status (the
 * latest per context) and answers as told: what is sent, and how often.
 */
import { describe, expect, it } from 'vitest';
import type { ForgeAnswer } from '../../../src/commit-status/client.ts';
import type { Forge } from '../../../src/commit-status/forge.ts';
import { CommitStatusReporter } from '../../../src/commit-status/reporter.ts';
import type { ForgeRequest } from '../../../src/commit-status/requests.ts';
import type { CommitStatus } from '../../../src/commit-status/state.ts';
import { createLogger } from '../../../src/log/index.ts';
import { eventually } from '../../support/eventually.ts';

const FORGE: Forge = { kind: 'github', apiBase: 'https://forge.test', project: 'o/r' };
const SHA = 'a'.repeat(40);

class MemoryForge {
  readonly shown = new Map<string, { state: string; description: string; context: string }>();
  readonly posts: Record<string, string>[] = [];
  /** Answers to give before the real one, first first. */
  readonly refusals: ForgeAnswer[] = [];

  send = async (request: ForgeRequest): Promise<ForgeAnswer> => {
    const refusal = this.refusals.shift();
    if (refusal) return refusal;
    if (request.method === 'GET') {
      return answer(200, JSON.stringify({ statuses: [...this.shown.values()] }));
    }
    const body = request.body ?? {};
    this.posts.push(body);
    this.shown.set(String(body.context), {
      state: String(body.state),
      description: String(body.description),
      context: String(body.context),
    });
    return answer(201, '{}');
  };
}

function answer(status: number, text: string, headers: Record<string, string> = {}): ForgeAnswer {
  return { status, text, headers: new Headers(headers) };
}

const status = (state: CommitStatus['state'], description: string): CommitStatus => ({
  sha: SHA,
  context: 'janus/shop/a',
  state,
  description,
  phase: state === 'success' ? 'Committed' : 'Preparing',
});

function reporter(forge: MemoryForge, results: string[] = []) {
  return new CommitStatusReporter({
    forge: FORGE,
    send: forge.send,
    log: createLogger({ level: 'silent', name: 'test', version: '0' }),
    retry: { baseMs: 1, capMs: 5, jitter: 0 },
    onResult: (r) => results.push(r),
  });
}

describe('the commit status reporter', () => {
  it('sends each status once, however often it is offered, and skips what the commit already shows', async () => {
    const forge = new MemoryForge();
    const results: string[] = [];
    const r = reporter(forge, results);
    r.start();
    r.offer('shop/a', status('pending', 'Preparing: dry runs and locks'));
    r.offer('shop/a', status('pending', 'Preparing: dry runs and locks'));
    await eventually(() => expect(r.pending).toBe(0));
    r.offer('shop/a', status('pending', 'Preparing: dry runs and locks'));
    r.offer('shop/a', status('success', 'Committed: all 1 changes committed'));
    await eventually(() => expect(forge.posts.map((p) => p.state)).toEqual(['pending', 'success']));
    await r.stop();
    // A new term (a restart, another leader) knows nothing, reads the forge, sends nothing.
    const next = reporter(forge, results);
    next.start();
    next.offer('shop/a', status('success', 'Committed: all 1 changes committed'));
    await eventually(() => expect(results.at(-1)).toBe('unchanged'));
    await next.stop();
    expect(forge.posts).toHaveLength(2);
  });

  it('sends only the latest wish when the forge was away, but never skips the first pending, after retrying the rate limit and the outage', async () => {
    const forge = new MemoryForge();
    forge.refusals.push(answer(429, 'slow down', { 'retry-after': '0' }), answer(503, 'down'));
    const results: string[] = [];
    const r = reporter(forge, results);
    r.offer('shop/a', status('pending', 'Pending: materialized, waiting to start'));
    r.offer('shop/a', status('pending', 'Preparing: dry runs and locks'));
    r.offer('shop/a', status('success', 'Committed: done'));
    r.start();
    await eventually(() =>
      expect(forge.posts.map((p) => p.description)).toEqual([
        'Preparing: dry runs and locks',
        'Committed: done',
      ]),
    );
    await r.stop();
    expect(results).toEqual(['retried', 'retried', 'sent', 'sent']);
  });

  it('once a status was delivered, a later outcome replaces any wish not yet sent', async () => {
    const forge = new MemoryForge();
    const r = reporter(forge);
    r.start();
    r.offer('shop/a', status('pending', 'Preparing: dry runs and locks'));
    await eventually(() => expect(forge.posts).toHaveLength(1));
    forge.refusals.push(answer(503, 'down'));
    r.offer('shop/a', status('pending', 'Committing: applying the changes'));
    r.offer('shop/a', status('success', 'Committed: done'));
    await eventually(() => expect(r.pending).toBe(0));
    await r.stop();
    expect(forge.posts.map((p) => p.description)).toEqual([
      'Preparing: dry runs and locks',
      'Committed: done',
    ]);
  });

  it('gives up, once, on a refusal retrying cannot fix', async () => {
    const forge = new MemoryForge();
    forge.refusals.push(answer(200, '{"statuses":[]}'), answer(401, 'Bad credentials'));
    const results: string[] = [];
    const r = reporter(forge, results);
    r.start();
    r.offer('shop/a', status('success', 'Committed: done'));
    await eventually(() => expect(results).toEqual(['failed']));
    r.offer('shop/a', status('success', 'Committed: done'));
    await r.stop();
    expect(results).toEqual(['failed']);
  });
});
