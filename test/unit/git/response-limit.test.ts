/** What one fetch may download: counted across the responses of one client, stopped past the limit. */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { FetchTooLargeError, limitResponseBytes, toGitAccessError } from '../../../src/git/index.ts';

/** A server that answers every request with `chunks` chunks of `size` bytes; records how many were read. */
function fakeServer(chunks: number, size: number, headers: Record<string, string> = {}) {
  const state = { read: 0, closed: 0 };
  const http: HttpClient = {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      async function* body(): AsyncIterableIterator<Uint8Array> {
        try {
          for (let i = 0; i < chunks; i++) {
            state.read++;
            yield new Uint8Array(size);
          }
        } finally {
          state.closed++;
        }
      }
      return { url: req.url, method: 'POST', statusCode: 200, statusMessage: 'OK', headers, body: body() };
    },
  };
  return { http, state };
}

async function drain(res: GitHttpResponse): Promise<number> {
  let bytes = 0;
  for await (const chunk of res.body ?? []) bytes += chunk.byteLength;
  return bytes;
}

describe('limitResponseBytes', () => {
  it('passes responses through while they stay within the budget, counting across requests', async () => {
    const { http } = fakeServer(4, 1000);
    const limited = limitResponseBytes(http, 8000);
    expect(await drain(await limited.request({ url: 'u' }))).toBe(4000);
    expect(await drain(await limited.request({ url: 'u' }))).toBe(4000);
    await expect(drain(await limited.request({ url: 'u' }))).rejects.toBeInstanceOf(FetchTooLargeError);
  });

  it('stops reading and closes the body as soon as the budget is exceeded', async () => {
    const { http, state } = fakeServer(1000, 1024);
    const error = await drain(await limitResponseBytes(http, 10 * 1024).request({ url: 'u' })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FetchTooLargeError);
    expect(state).toEqual({ read: 11, closed: 1 });
  });

  it('refuses a response whose Content-Length is over the budget without reading it', async () => {
    const { http, state } = fakeServer(100, 1024, { 'content-length': String(100 * 1024) });
    await expect(limitResponseBytes(http, 64 * 1024).request({ url: 'u' })).rejects.toBeInstanceOf(
      FetchTooLargeError,
    );
    expect(state.read).toBe(0);
  });

  it('becomes a GitAccessError naming the repository, the ref and the limit', () => {
    const error = toGitAccessError(new FetchTooLargeError(64 * 1024 * 1024), {
      repository: 'https://git.example.com/org/deploys.git',
      ref: 'main',
      operation: 'fetch',
    });
    expect(error).toMatchObject({ kind: 'too-large', repository: 'https://git.example.com/org/deploys.git' });
    expect(error.message).toBe(
      'fetch https://git.example.com/org/deploys.git (main): the server sent more than 64 MiB (67108864 bytes) for one fetch, the limit set by --max-fetch-bytes (JANUS_MAX_FETCH_BYTES); the download was stopped',
    );
  });
});
