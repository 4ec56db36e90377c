/**
 * The pod's /tmp holds the renders' checkouts (src/render/checkout.ts writes each under tmpdir(),
 * up to CHECKOUT_LIMITS.maxBytes), as many at once as the render concurrency: an emptyDir smaller
 * than that gets the pod evicted by the kubelet at a big commit. Checked for the plain manifests
 * (deployment.yaml with the concurrency of settings.yaml) and for the Helm chart rendered by the
 * real helm, with its default concurrency and a raised one.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseByteSize } from '../../../src/cli/byte-size.ts';
import { CHECKOUT_LIMITS } from '../../../src/render/limits.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

/** What these checks read of the manifests' objects. */
interface Manifest {
  kind?: string;
  data?: Record<string, string>;
  spec?: {
    template?: {
      spec?: {
        containers?: { volumeMounts?: { name: string; mountPath: string }[] }[];
        volumes?: { name: string; emptyDir?: { sizeLimit?: string } }[];
      };
    };
  };
}

function objectsOf(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o) => o !== null);
}

/** The bytes of the emptyDir mounted at /tmp in the Deployment's controller container. */
function tmpSizeLimit(objects: Manifest[]): number {
  const pod = objects.find((o) => o.kind === 'Deployment')?.spec?.template?.spec;
  const mount = pod?.containers?.[0]?.volumeMounts?.find((m) => m.mountPath === '/tmp');
  const volume = pod?.volumes?.find((v) => v.name === mount?.name);
  const limit = volume?.emptyDir?.sizeLimit;
  if (limit === undefined) throw new Error('no sizeLimit on the /tmp emptyDir');
  return parseByteSize(limit, 'sizeLimit');
}

function helmTemplate(args: string[]): Manifest[] {
  const result = spawnSync(
    renderTools().helm,
    ['template', 'janus', 'manifests/helm/janus', '--namespace', 'janus-system', ...args],
    { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' } },
  );
  if (result.status !== 0) throw new Error(`helm template exited ${result.status}: ${result.stderr}`);
  return objectsOf(result.stdout);
}

describe("/tmp holds every render's checkout at once", () => {
  it('in the plain manifests', async () => {
    const deployment = objectsOf(await readFile(join(REPO_ROOT, 'manifests/deployment.yaml'), 'utf8'));
    const settings = objectsOf(await readFile(join(REPO_ROOT, 'manifests/settings.yaml'), 'utf8'));
    const concurrency = Number(
      settings.find((o) => o.kind === 'ConfigMap')?.data?.JANUS_RENDER_CONCURRENCY ?? Number.NaN,
    );
    expect(concurrency).toBeGreaterThan(0);
    expect(tmpSizeLimit(deployment)).toBeGreaterThanOrEqual(concurrency * CHECKOUT_LIMITS.maxBytes);
  });

  it.each([[[]], [['--set', 'sources.render.concurrency=5']]])('in the Helm chart (%j)', (args) => {
    const objects = helmTemplate(args);
    const settings = objects.find((o) => o.kind === 'ConfigMap' && o.data?.JANUS_RENDER_CONCURRENCY);
    const concurrency = Number(settings?.data?.JANUS_RENDER_CONCURRENCY);
    expect(concurrency).toBe(args.length === 0 ? 2 : 5);
    expect(tmpSizeLimit(objects)).toBeGreaterThanOrEqual(concurrency * CHECKOUT_LIMITS.maxBytes);
  });
});
