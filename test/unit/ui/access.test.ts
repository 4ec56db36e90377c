import { describe, expect, it } from 'vitest';
import { cookieName, cookieValue, judgeRequest, type RequestFacts } from '../../../src/ui/access.ts';

const access = { port: 4321, token: 'secret-token-abc' };
const cookie = `${cookieName(4321)}=${access.token}`;
const get = (facts: Partial<RequestFacts> = {}): RequestFacts => ({
  method: 'GET',
  url: '/api/info',
  host: '127.0.0.1:4321',
  origin: undefined,
  cookie,
  ...facts,
});

describe('who may use janus ui', () => {
  it('lets the signed-in browser read, on either loopback name', () => {
    expect(judgeRequest(get(), access)).toEqual({ kind: 'allow' });
    expect(judgeRequest(get({ host: 'localhost:4321' }), access)).toEqual({ kind: 'allow' });
  });

  it('trades the secret in the URL for a strict, HttpOnly cookie and drops it from the address', () => {
    const verdict = judgeRequest(get({ url: `/?token=${access.token}&x=1`, cookie: undefined }), access);
    expect(verdict).toEqual({
      kind: 'login',
      setCookie: `janus-ui-4321=${access.token}; HttpOnly; SameSite=Strict; Path=/`,
      location: '/?x=1',
    });
  });

  it('refuses a wrong secret, and no secret at all', () => {
    expect(judgeRequest(get({ url: '/?token=guess', cookie: undefined }), access)).toMatchObject({
      kind: 'deny',
      status: 401,
    });
    expect(judgeRequest(get({ cookie: undefined }), access)).toMatchObject({ kind: 'deny', status: 401 });
    expect(judgeRequest(get({ cookie: `${cookieName(4321)}=secret-token-abd` }), access)).toMatchObject({
      kind: 'deny',
      status: 401,
    });
    // Another janus ui's cookie (another port) is not this one's.
    expect(judgeRequest(get({ cookie: `${cookieName(4322)}=${access.token}` }), access)).toMatchObject({
      kind: 'deny',
    });
    // Two cookies of the name: neither is trusted.
    expect(judgeRequest(get({ cookie: `${cookie}; ${cookie}` }), access)).toMatchObject({ kind: 'deny' });
  });

  it('refuses a request naming another host, whatever it carries (DNS rebinding)', () => {
    for (const host of ['evil.example:4321', 'evil.example', '127.0.0.1:80', '127.0.0.1', undefined]) {
      expect(judgeRequest(get({ host }), access)).toMatchObject({ kind: 'deny', status: 403 });
    }
  });

  it('refuses a change from another origin, or without an Origin, even with the cookie', () => {
    const post = { method: 'POST', url: '/api/request/transaction/a/b' };
    expect(judgeRequest(get({ ...post, origin: 'http://127.0.0.1:4321' }), access)).toEqual({
      kind: 'allow',
    });
    expect(judgeRequest(get({ ...post, origin: 'http://evil.example' }), access)).toMatchObject({
      kind: 'deny',
      status: 403,
    });
    expect(judgeRequest(get({ ...post, origin: 'null' }), access)).toMatchObject({ kind: 'deny' });
    expect(judgeRequest(get(post), access)).toMatchObject({ kind: 'deny', status: 403 });
    // A read from another page's script is refused too (it would not see the answer, but it does not get one).
    expect(judgeRequest(get({ origin: 'http://evil.example' }), access)).toMatchObject({ kind: 'deny' });
  });

  it('serves only GET, HEAD and POST', () => {
    expect(judgeRequest(get({ method: 'DELETE' }), access)).toMatchObject({ kind: 'deny', status: 405 });
  });

  it('reads one cookie out of a header', () => {
    expect(cookieValue('a=1; janus-ui-1=x; b=2', 'janus-ui-1')).toBe('x');
    expect(cookieValue(undefined, 'janus-ui-1')).toBeUndefined();
  });
});
