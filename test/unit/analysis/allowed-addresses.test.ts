/**
 * The addresses a check may make the controller query (--analysis-allowed-addresses): matched on
 * the parsed, normalized URL, never on its text, so no spelling of an address reaches past a
 * prefix the platform team allowed.
 */
import { describe, expect, it } from 'vitest';
import {
  AllowedAddressError,
  isAllowedAddress,
  parseAllowedAddresses,
} from '../../../src/analysis/allowed-addresses.ts';

const allows = (list: string, url: string) => isAllowedAddress(url, parseAllowedAddresses(list), 'shop');

describe('parseAllowedAddresses', () => {
  it('reads a comma-separated list, spaces and empty entries ignored; unset or empty allows nothing', () => {
    expect(parseAllowedAddresses(undefined)).toEqual([]);
    expect(parseAllowedAddresses('')).toEqual([]);
    expect(
      parseAllowedAddresses(' http://prom:9090 , ,https://metrics.example/api ').map((a) => a.text),
    ).toEqual(['http://prom:9090', 'https://metrics.example/api']);
  });

  it('refuses an entry that is not an http(s) prefix, naming it', () => {
    for (const entry of [
      'prom:9090',
      'prometheus.monitoring',
      'ftp://prom',
      'file:///etc/passwd',
      'http://user:pw@prom:9090',
      'http://prom:9090/?x=1',
      'http://prom:9090/#x',
      'http://prom/a%2Fb',
      'http://*.example',
      'http://',
    ]) {
      expect(() => parseAllowedAddresses(entry), entry).toThrow(AllowedAddressError);
      expect(() => parseAllowedAddresses(`http://prom:9090,${entry}`), entry).toThrow(JSON.stringify(entry));
    }
  });
});

describe('an entry for some namespaces: <namespace glob>=<prefix>', () => {
  it('allows its prefix to those namespaces only; an entry without a glob to every one', () => {
    const list = parseAllowedAddresses(
      'team-a=http://prom-a:9090, team-b-*=http://prom-b:9090, http://thanos',
    );
    expect(list.map((a) => [a.namespaces, a.text])).toEqual([
      ['team-a', 'http://prom-a:9090'],
      ['team-b-*', 'http://prom-b:9090'],
      [undefined, 'http://thanos'],
    ]);
    const may = (namespace: string, url: string) => isAllowedAddress(url, list, namespace);
    expect(may('team-a', 'http://prom-a:9090/api/v1/query')).toBe(true);
    expect(may('team-a', 'http://prom-b:9090/api/v1/query')).toBe(false);
    expect(may('team-b-web', 'http://prom-b:9090/api/v1/query')).toBe(true);
    expect(may('team-b', 'http://prom-b:9090/api/v1/query')).toBe(false);
    expect(may('team-ab', 'http://prom-a:9090/api/v1/query')).toBe(false);
    for (const ns of ['team-a', 'team-b-web', 'shop'])
      expect(may(ns, 'http://thanos/api/v1/query')).toBe(true);
  });

  it('refuses a glob that is no namespace, naming the entry', () => {
    for (const entry of [
      '=http://prom',
      '-a=http://prom',
      'a-=http://prom',
      `${'a'.repeat(64)}=http://prom`,
    ]) {
      expect(() => parseAllowedAddresses(entry), entry).toThrow(AllowedAddressError);
    }
    // A name that is no glob at all reads as an address, and is refused as one.
    expect(() => parseAllowedAddresses('Team_A=http://prom')).toThrow('is not an address prefix');
  });
});

describe('isAllowedAddress', () => {
  it('allows nothing when the list is empty', () => {
    expect(isAllowedAddress('http://prometheus.monitoring:9090/api/v1/query', [], 'shop')).toBe(false);
  });

  it('allows every path under an origin given without a path', () => {
    expect(allows('http://prom:9090', 'http://prom:9090/api/v1/query?query=up')).toBe(true);
    expect(allows('http://prom:9090', 'http://prom:9090')).toBe(true);
  });

  it('matches the scheme, the host and the port exactly', () => {
    expect(allows('http://prom:9090', 'https://prom:9090/')).toBe(false);
    expect(allows('http://prom:9090', 'http://prom:9091/')).toBe(false);
    expect(allows('http://prom:9090', 'http://prom/')).toBe(false);
    expect(allows('http://prom:9090', 'http://prom.evil:9090/')).toBe(false);
    expect(allows('http://prom:9090', 'http://evilprom:9090/')).toBe(false);
    expect(allows('http://prom.monitoring', 'http://prom.monitoring.evil.example/')).toBe(false);
  });

  it('compares hosts without case, and ports with their defaults made explicit', () => {
    expect(allows('http://Prom.Example', 'HTTP://PROM.example/x')).toBe(true);
    expect(allows('http://prom.example', 'http://prom.example:80/x')).toBe(true);
    expect(allows('http://prom.example:80', 'http://prom.example/x')).toBe(true);
    expect(allows('https://prom.example', 'https://prom.example:443/x')).toBe(true);
    expect(allows('https://prom.example', 'https://prom.example:80/x')).toBe(false);
    expect(allows('http://prom.example', 'http://prom.example:443/x')).toBe(false);
  });

  it('reads userinfo as what it is: the host comes after the @', () => {
    expect(allows('http://allowed.example', 'http://allowed.example@evil.example/')).toBe(false);
    expect(allows('http://allowed.example', 'http://allowed.example:80@evil.example/')).toBe(false);
    expect(allows('http://evil.example', 'http://allowed.example@evil.example/')).toBe(false); // userinfo: never
  });

  it('matches a path prefix on a segment boundary only', () => {
    const list = 'http://gw.example/prometheus';
    expect(allows(list, 'http://gw.example/prometheus')).toBe(true);
    expect(allows(list, 'http://gw.example/prometheus/')).toBe(true);
    expect(allows(list, 'http://gw.example/prometheus/api/v1/query')).toBe(true);
    expect(allows(list, 'http://gw.example/prometheus-admin/api')).toBe(false);
    expect(allows(list, 'http://gw.example/prometheusx')).toBe(false);
    expect(allows(list, 'http://gw.example/')).toBe(false);
    expect(allows('http://gw.example/prometheus/', 'http://gw.example/prometheus/api')).toBe(true);
  });

  it('resolves dot segments before matching, however they are spelled', () => {
    const list = 'http://gw.example/api';
    expect(allows(list, 'http://gw.example/api/../admin')).toBe(false);
    expect(allows(list, 'http://gw.example/api/%2e%2e/admin')).toBe(false);
    expect(allows(list, 'http://gw.example/api/.%2E/admin')).toBe(false);
    expect(allows(list, 'http://gw.example/api\\..\\admin')).toBe(false);
    expect(allows(list, 'http://gw.example/api/./v1/../query')).toBe(true);
    expect(allows(list, 'http://gw.example/admin/../api/query')).toBe(true);
  });

  it('refuses an encoded slash or backslash, which a server may decode into another path', () => {
    const list = 'http://gw.example/api';
    expect(allows(list, 'http://gw.example/api/..%2Fadmin')).toBe(false);
    expect(allows(list, 'http://gw.example/api/..%2fadmin')).toBe(false);
    expect(allows(list, 'http://gw.example/api/..%5Cadmin')).toBe(false);
    expect(allows(list, 'http://gw.example/api%2F..%2Fadmin')).toBe(false);
    expect(allows(list, 'http://gw.example/api/bad%zzescape')).toBe(false);
  });

  it('compares percent-encoded path segments by what they decode to', () => {
    expect(allows('http://gw.example/api', 'http://gw.example/%61pi/v1')).toBe(true);
    expect(allows('http://gw.example/%61pi', 'http://gw.example/api/v1')).toBe(true);
    expect(allows('http://gw.example/api', 'http://gw.example/%61pix')).toBe(false);
  });

  it('decodes a percent-encoded host before comparing it', () => {
    expect(allows('http://prom.example', 'http://%70rom.example/')).toBe(true);
    expect(allows('http://prom.example', 'http://prom%2eexample.evil/')).toBe(false);
  });

  it('treats a trailing dot as another name (resolved without search domains)', () => {
    expect(allows('http://prometheus.monitoring', 'http://prometheus.monitoring./')).toBe(false);
    expect(allows('http://prometheus.monitoring.', 'http://prometheus.monitoring/')).toBe(false);
    expect(allows('http://prometheus.monitoring.', 'http://prometheus.monitoring./x')).toBe(true);
  });

  it('compares IP addresses in their canonical form, IPv4 and IPv6', () => {
    expect(allows('http://[::1]:9090', 'http://[0:0:0:0:0:0:0:1]:9090/api')).toBe(true);
    expect(allows('http://[::1]:9090', 'http://[::2]:9090/api')).toBe(false);
    expect(allows('http://[::1]:9090', 'http://127.0.0.1:9090/api')).toBe(false);
    expect(allows('http://127.0.0.1:9090', 'http://2130706433:9090/api')).toBe(true);
    expect(allows('http://127.0.0.1:9090', 'http://0x7f.1:9090/api')).toBe(true);
    expect(allows('http://10.0.0.1', 'http://169.254.169.254/latest/meta-data')).toBe(false);
    expect(allows('http://10.0.0.1', 'http://[::ffff:169.254.169.254]/')).toBe(false);
  });

  it('refuses what is not an http(s) URL', () => {
    expect(allows('http://prom', 'file:///etc/passwd')).toBe(false);
    expect(allows('http://prom', 'not a url')).toBe(false);
    expect(allows('http://prom', '//prom/x')).toBe(false);
  });

  it('allows an address that any entry of the list allows', () => {
    const list = 'http://prom-a:9090,https://gw.example/prometheus';
    expect(allows(list, 'http://prom-a:9090/api/v1/query')).toBe(true);
    expect(allows(list, 'https://gw.example/prometheus/api/v1/query')).toBe(true);
    expect(allows(list, 'http://gw.example/prometheus/api/v1/query')).toBe(false);
  });
});
