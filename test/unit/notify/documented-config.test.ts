/** The notification file docs/operations.md shows is one the controller accepts, as written. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseNotifyConfig } from '../../../src/notify/config.ts';

const OPERATIONS = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');

describe('docs/operations.md, Notifications', () => {
  it('shows a notifications.yaml that parses, with every provider type', () => {
    const block = /```yaml\n(# notifications\.yaml\n[\s\S]*?)```/.exec(OPERATIONS)?.[1];
    expect(block, 'the ```yaml block starting "# notifications.yaml"').toBeDefined();
    const config = parseNotifyConfig('docs/operations.md', block ?? '');
    expect(config.providers.map((p) => p.type).sort()).toEqual([
      'alertmanager',
      'cloudevents',
      'msteams',
      'slack',
    ]);
    expect(config.routes.map((r) => r.name)).toEqual([
      'audit-everything',
      'shop',
      'billing-problems',
      'page-on-failures',
    ]);
  });

  it('the notifications.yaml shipped in manifests/ (off) parses', () => {
    const manifest = readFileSync(new URL('../../../manifests/notifications.yaml', import.meta.url), 'utf8');
    const configMap = parse(manifest) as { data: Record<string, string> };
    const config = parseNotifyConfig(
      'manifests/notifications.yaml',
      configMap.data['notifications.yaml'] ?? '',
    );
    expect(config.providers.map((p) => p.name)).toEqual(['audit']);
  });
});
