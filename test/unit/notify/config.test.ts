import { describe, expect, it } from 'vitest';
import { NotifyConfigError, parseNotifyConfig } from '../../../src/notify/config.ts';

const SAMPLE = `
transactionUrl: https://janus.example.com/transactions/{namespace}/{name}
commitUrl: https://git.example.com/platform/deploys/commit/{commit}
providers:
  - name: audit
    type: cloudevents
    address: https://audit.example.com/janus
    secretFile: /etc/janus/notifications/audit-hmac-key
  - name: shop-slack
    type: slack
    addressFile: /etc/janus/notifications/shop-slack-url
  - name: alertmanager
    type: alertmanager
    address: http://alertmanager.monitoring:9093/api/v2/alerts
    resolveAfter: 12h
    timeout: 5s
routes:
  - name: everything-to-audit
    providers: [audit]
  - name: shop-team
    namespaces: [shop, "shop-*"]
    severity: warning
    providers: [shop-slack]
  - phases: [RolledBack, Failed]
    providers: [alertmanager]
`;

describe('parseNotifyConfig', () => {
  it('reads providers and routes, with the defaults filled in', () => {
    const config = parseNotifyConfig('n.yaml', SAMPLE);
    expect(config.providers.map((p) => [p.name, p.type, p.timeoutMs, p.resolveAfterMs])).toEqual([
      ['audit', 'cloudevents', 10_000, 86_400_000],
      ['shop-slack', 'slack', 10_000, 86_400_000],
      ['alertmanager', 'alertmanager', 5000, 43_200_000],
    ]);
    expect(config.routes[1]).toEqual({
      name: 'shop-team',
      namespaces: ['shop', 'shop-*'],
      phases: [],
      severity: 'warning',
      providers: ['shop-slack'],
    });
    expect(config.routes[2]).toMatchObject({
      name: 'routes[2]',
      severity: 'info',
      phases: ['RolledBack', 'Failed'],
    });
  });

  it.each([
    [
      'a route to an unknown provider',
      'routes: [{providers: [nobody]}]',
      'routes[0].providers: no provider is named "nobody"',
    ],
    [
      'an unknown field',
      'providers: [{name: a, type: slack, address: "https://x", channel: c}]',
      'unknown field "channel"',
    ],
    [
      'both address and addressFile',
      'providers: [{name: a, type: slack, address: "https://x", addressFile: /f}]',
      'exactly one of address and addressFile',
    ],
    ['an unsigned webhook', 'providers: [{name: a, type: cloudevents, address: "https://x"}]', 'secretFile'],
    [
      'a phase that does not notify',
      'providers: [{name: a, type: slack, address: "https://x"}]\nroutes: [{phases: [Preparing], providers: [a]}]',
      '"Preparing" is not one of',
    ],
    [
      'credentials in an address',
      'providers: [{name: a, type: slack, address: "https://u:p@x"}]',
      'no credentials in the URL',
    ],
    [
      'a file:// address',
      'providers: [{name: a, type: slack, address: "file:///etc/passwd"}]',
      'only http and https',
    ],
    [
      'an unknown type',
      'providers: [{name: a, type: discord, address: "https://x"}]',
      '"discord" is not one of',
    ],
    ['invalid YAML', 'providers: [', 'n.yaml'],
  ])('refuses %s, naming it', (_, text, message) => {
    expect(() => parseNotifyConfig('n.yaml', text)).toThrow(NotifyConfigError);
    expect(() => parseNotifyConfig('n.yaml', text)).toThrow(message);
  });

  it('reads an empty file as no notifications', () => {
    expect(parseNotifyConfig('n.yaml', '')).toEqual({ providers: [], routes: [] });
  });
});
