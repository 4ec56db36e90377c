/**
 * The real kustomize and helm for the render tests: built from their pinned Go modules
 * (test/kube-testenv/kustomize/ and helm/) by test/kube-testenv/build.sh with the control plane,
 * cached; the first call in a fresh cache builds them. $JANUS_KUBE_BIN names a folder that has them.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RenderTools } from '../../../src/render/tools.ts';
import { builtBinaries } from './cached-build.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('../../kube-testenv/build.sh', import.meta.url));

let binDir: string | undefined;

/** The folder holding kustomize and helm. */
export function renderToolsDir(): string {
  binDir ??= builtBinaries(BUILD_SCRIPT, process.env.JANUS_KUBE_BIN);
  return binDir;
}

export function renderTools(): Required<{ [K in keyof RenderTools]: string }> {
  const dir = renderToolsDir();
  return { kustomize: join(dir, 'kustomize'), helm: join(dir, 'helm') };
}
