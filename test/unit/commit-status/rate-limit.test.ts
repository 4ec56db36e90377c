import { describe, expect, it } from 'vitest';
import {
  judgeResponse,
  MAX_RATE_LIMIT_WAIT_MS,
  rateLimitWait,
} from '../../../src/commit-status/rate-limit.ts';

const headers = (h: Record<string, string>) => new Headers(h);
const NOW = Date.parse('2026-03-01T10:00:00Z');

describe('what a forge answer says about trying again', () => {
  it('is done on 2xx', () => {
    expect(judgeResponse(201, headers({}), '', NOW)).toEqual({ kind: 'done' });
  });

  it('waits as Retry-After says, in seconds or as a date', () => {
    expect(rateLimitWait(429, headers({ 'retry-after': '30' }), NOW)).toBe(30_000);
    expect(rateLimitWait(403, headers({ 'retry-after': 'Sun, 01 Mar 2026 10:01:00 GMT' }), NOW)).toBe(60_000);
  });

  it("waits for GitHub's X-RateLimit-Reset and GitLab's RateLimit-Reset when none are left", () => {
    const reset = String(NOW / 1000 + 120);
    expect(
      rateLimitWait(403, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }), NOW),
    ).toBe(120_000);
    expect(rateLimitWait(429, headers({ 'ratelimit-remaining': '0', 'ratelimit-reset': reset }), NOW)).toBe(
      120_000,
    );
  });

  it('caps a long wait, and takes a 403 with requests left as a refusal', () => {
    expect(rateLimitWait(429, headers({ 'retry-after': '86400' }), NOW)).toBe(MAX_RATE_LIMIT_WAIT_MS);
    expect(
      judgeResponse(403, headers({ 'x-ratelimit-remaining': '4999' }), 'Resource not accessible', NOW),
    ).toEqual({
      kind: 'give-up',
      why: 'HTTP 403: Resource not accessible',
    });
  });

  it('retries outages and gives up on what retrying cannot fix', () => {
    expect(judgeResponse(502, headers({}), '', NOW)).toEqual({ kind: 'retry', why: 'HTTP 502' });
    expect(judgeResponse(429, headers({}), '', NOW)).toEqual({
      kind: 'retry',
      afterMs: 0,
      why: 'rate limited (HTTP 429)',
    });
    expect(judgeResponse(401, headers({}), 'Bad credentials', NOW).kind).toBe('give-up');
    expect(judgeResponse(422, headers({}), 'No commit found for SHA', NOW).kind).toBe('give-up');
  });
});
