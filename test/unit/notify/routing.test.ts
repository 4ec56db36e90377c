import { describe, expect, it } from 'vitest';
import { parseNotifyConfig } from '../../../src/notify/config.ts';
import { fill, messageOf } from '../../../src/notify/message.ts';
import { providersFor } from '../../../src/notify/routing.ts';
import { globMatches } from '../../../src/text/glob.ts';
import { anEvent, SOURCE_SHA } from './events.ts';

const CONFIG = parseNotifyConfig(
  'n.yaml',
  `
providers:
  - {name: audit, type: cloudevents, address: "https://audit.example.com", secretFile: /k}
  - {name: shop, type: slack, address: "https://hooks.slack.com/services/T/B/X"}
  - {name: billing, type: msteams, address: "https://example.webhook.office.com/x"}
  - {name: pager, type: alertmanager, address: "http://am:9093/api/v2/alerts"}
routes:
  - {providers: [audit]}
  - {namespaces: ["shop", "shop-*"], providers: [shop, audit]}
  - {namespaces: [billing], providers: [billing]}
  - {severity: warning, phases: [RollingBack, RolledBack, Failed], providers: [pager]}
`,
);

const names = (event: ReturnType<typeof anEvent>) => providersFor(event, CONFIG).map((p) => p.name);

describe('providersFor', () => {
  it("sends a namespace's events to its routes only, each provider once", () => {
    expect(names(anEvent({ namespace: 'shop', phase: 'Committed', severity: 'info' }))).toEqual([
      'audit',
      'shop',
    ]);
    expect(names(anEvent({ namespace: 'shop-eu', phase: 'Committed', severity: 'info' }))).toEqual([
      'audit',
      'shop',
    ]);
    expect(names(anEvent({ namespace: 'billing', phase: 'Committed', severity: 'info' }))).toEqual([
      'audit',
      'billing',
    ]);
  });

  it("never sends one namespace's events to a route of another", () => {
    for (const phase of ['Committed', 'RollingBack', 'RolledBack', 'Failed', 'Rejected'] as const)
      expect(names(anEvent({ namespace: 'shop', phase }))).not.toContain('billing');
    expect(names(anEvent({ namespace: 'shopping', phase: 'Committed', severity: 'info' }))).toEqual([
      'audit',
    ]);
  });

  it('filters by phase and by the least severity', () => {
    expect(names(anEvent({ namespace: 'x', phase: 'Committed', severity: 'info' }))).toEqual(['audit']);
    expect(names(anEvent({ namespace: 'x', phase: 'RollingBack', severity: 'warning' }))).toEqual([
      'audit',
      'pager',
    ]);
    expect(names(anEvent({ namespace: 'x', phase: 'Rejected', severity: 'error' }))).toEqual(['audit']);
  });
});

describe('globMatches', () => {
  it.each([
    ['shop', 'shop', true],
    ['shop-*', 'shop-eu', true],
    ['shop-*', 'shop', false],
    ['team-?', 'team-a', true],
    ['team-?', 'team-ab', false],
    ['a.b', 'axb', false],
    ['*', 'anything', true],
  ])('%s ~ %s: %s', (glob, name, matches) => {
    expect(globMatches(glob, name)).toBe(matches);
  });
});

describe('messageOf: what happened and why in one glance', () => {
  it('has the transaction and phase, the reason, commit (linked), changes, directory and the link', () => {
    const message = messageOf(anEvent({ author: 'Ada <ada@example.com>' }), {
      transactionUrl: 'https://janus.example.com/t/{namespace}/{name}',
      commitUrl: 'https://git.example.com/c/{commit}',
    });
    expect(message).toEqual({
      title: 'shop/release-42: RolledBack',
      reason: 'apps/v1 Deployment shop/web: pod web-7c9 is in CrashLoopBackOff (back-off 40s)',
      facts: [
        { label: 'Commit', value: 'a1b2c3d', url: `https://git.example.com/c/${SOURCE_SHA}` },
        { label: 'Author', value: 'Ada <ada@example.com>' },
        { label: 'Changes', value: '2 changes (2/2 committed)' },
        { label: 'Directory', value: 'transactions/release-42' },
      ],
      link: 'https://janus.example.com/t/shop/release-42',
    });
  });

  it('encodes what it puts in a URL', () => {
    expect(fill('https://x/{name}?p={phase}', anEvent({ name: 'a/b?c' }))).toBe(
      'https://x/a%2Fb%3Fc?p=RolledBack',
    );
  });
});
