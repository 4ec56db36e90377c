/**
 * The real kustomize and helm for the tests (sources' renders, the Helm chart of manifests/):
 * built from their pinned Go modules (test/kube-testenv/kustomize/ and helm/) by
 * test/kube-testenv/build-render-tools.sh, the script the image's render-tools stage runs too,
 * cached; the first call in a fresh cache builds them. $JANUS_RENDER_TOOLS_BIN names a folder
 * that has them.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RenderTools } from '../../../src/render/tools.ts';
import { builtBinaries } from './cached-build.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('../../kube-testenv/build-render-tools.sh', import.meta.url));

let binDir: string | undefined;

/** The folder holding kustomize and helm. */
export function renderToolsDir(): string {
  binDir ??= builtBinaries(BUILD_SCRIPT, process.env.JANUS_RENDER_TOOLS_BIN);
  return binDir;
}

export function renderTools(): Required<{ [K in keyof RenderTools]: string }> {
  const dir = renderToolsDir();
  return { kustomize: join(dir, 'kustomize'), helm: join(dir, 'helm') };
}
