/** Redirects of Git's HTTP requests, by fetch's rules: never with credentials to another origin. */
import { describe, expect, it } from 'vitest';
import { redirected } from '../../../src/git/http-client.ts';

const post = {
  url: new URL('https://git.example.com/team/deploy.git/git-upload-pack'),
  method: 'POST',
  headers: {
    authorization: 'Basic c2VjcmV0',
    cookie: 'session=1',
    'content-type': 'application/x-git-upload-pack-request',
    'git-protocol': 'version=2',
  },
  body: Buffer.from('0000'),
};

describe('redirected', () => {
  it('keeps method, body and credentials within the origin (307, 308)', () => {
    for (const status of [307, 308]) {
      const next = redirected(post, status, '/moved/deploy.git/git-upload-pack');
      expect(next.url.href).toBe('https://git.example.com/moved/deploy.git/git-upload-pack');
      expect(next).toMatchObject({ method: 'POST', headers: post.headers, body: post.body });
    }
  });

  it('drops every credential header when the redirect leaves the origin: host, port or scheme', () => {
    for (const location of [
      'https://mirror.example.com/deploy.git/git-upload-pack',
      'https://git.example.com:8443/deploy.git/git-upload-pack',
      'http://git.example.com/deploy.git/git-upload-pack',
    ]) {
      const next = redirected(post, 307, location);
      expect(next.headers).toEqual({
        'content-type': 'application/x-git-upload-pack-request',
        'git-protocol': 'version=2',
      });
      expect(next.body).toBe(post.body);
    }
  });

  it('turns a 303, or a 301/302 answering a POST, into a GET without body', () => {
    for (const status of [301, 302, 303]) {
      const next = redirected(post, status, '/elsewhere');
      expect(next.method).toBe('GET');
      expect(next.body).toBeUndefined();
      expect(next.headers['content-type']).toBeUndefined();
      expect(next.headers.authorization).toBe('Basic c2VjcmV0');
    }
    const get = { ...post, method: 'GET', body: undefined };
    expect(redirected(get, 301, '/elsewhere').method).toBe('GET');
  });

  it('follows only http and https', () => {
    expect(() => redirected(post, 302, 'file:///etc/passwd')).toThrow(
      'redirected to file: (only http and https are followed)',
    );
  });
});
