/**
 * validate and plan read the deployed janus run's settings file (--settings, the janus-settings
 * ConfigMap), so pull-request CI reaches the cluster's verdict without copying the policy.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { janus } from '../../support/processes/cli.ts';

async function settings(data: Record<string, string>): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'janus-settings-')), 'settings.yaml');
  const other = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'janus-system' } };
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'janus-settings' }, data };
  // As `kubectl kustomize manifests/` renders it: the ConfigMap among other documents.
  await writeFile(file, `${stringify(other)}---\n${stringify(cm)}`);
  return file;
}

describe('--settings <file>', () => {
  it('gives validate the policy of the shipped manifests/settings.yaml: safe by default, everything refused', async () => {
    const result = await janus(['validate', 'examples/', '--settings', 'manifests/settings.yaml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('spec.serviceAccountName');
  });

  it('takes the policy of an overlay, and flags and the environment still win over it', async () => {
    const file = await settings({
      JANUS_DEFAULT_NAMESPACE: 'shop',
      JANUS_ALLOWED_NAMESPACES: 'shop',
      JANUS_ALLOWED_SERVICE_ACCOUNTS: 'shop/deployer',
    });
    expect((await janus(['validate', 'examples/', '--settings', file])).code).toBe(0);
    expect((await janus(['validate', 'examples/'], { env: { JANUS_SETTINGS: file } })).code).toBe(0);
    const narrowed = await janus([
      'validate',
      'examples/',
      '--settings',
      file,
      '--allowed-service-accounts',
      'other',
    ]);
    expect(narrowed.code).toBe(1);
    // The environment wins too: here its namespace no longer covers the file's ServiceAccount.
    const byEnv = await janus(['validate', 'examples/', '--settings', file], {
      env: { JANUS_ALLOWED_NAMESPACES: 'payments' },
    });
    expect(byEnv.code).toBe(2);
    expect(byEnv.stderr).toContain('"shop" is not an allowed namespace (allowed: payments)');
  });

  it('names the file when it is missing or holds no settings', async () => {
    const missing = await janus(['plan', 'examples/', '--settings', '/nonexistent/settings.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--settings /nonexistent/settings.yaml: no such file');
    const empty = await janus(['validate', 'examples/', '--settings', 'manifests/deployment.yaml']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no ConfigMap with JANUS_* entries');
  });
});
