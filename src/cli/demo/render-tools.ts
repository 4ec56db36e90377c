/**
 * The render tools of `janus demo --sources`: kustomize and helm, built from their pinned Go
 * modules by test/kube-testenv/build-render-tools.sh, the script the tests and the image's
 * render-tools stage run, into ${JANUS_CACHE_DIR:-~/.cache/janus}/render-tools/<hash>/bin (or
 * $JANUS_RENDER_TOOLS_BIN), found as built-tools.ts says. The demo's janus run is given them
 * with --kustomize-path and --helm-path, as the tests' is.
 */
import { join } from 'node:path';
import { locateBuild, runBuild, type ToolBuild } from './built-tools.ts';
import type { Narrator } from './progress.ts';

export const RENDER_TOOLS: ToolBuild = {
  what: 'the render tools of sources',
  script: 'test/kube-testenv/build-render-tools.sh',
  cache: 'render-tools',
  override: 'JANUS_RENDER_TOOLS_BIN',
  npmScript: 'render-tools:build',
  required: ['kustomize', 'helm'],
};

/** The flags that give janus run the tools in `binDir`. */
export function renderToolFlags(binDir: string): string[] {
  return ['--kustomize-path', join(binDir, 'kustomize'), '--helm-path', join(binDir, 'helm')];
}

/** The folder holding kustomize and helm: built (first time only) or found in the cache, narrated as a step. */
export function obtainRenderTools(narrator: Narrator): string {
  const source = locateBuild(RENDER_TOOLS);
  if ('missing' in source) throw new Error(source.missing);
  if (source.build) {
    narrator.step(
      'Building kustomize and helm from their pinned Go modules (test/kube-testenv/build-render-tools.sh).',
    );
    narrator.detail(
      'janus run renders the overlay with the real kustomize, in its sandbox, as the image ships it.',
    );
    narrator.detail(
      'The first time this takes about 5 minutes; afterwards it is cached (~/.cache/janus/render-tools).',
    );
    return runBuild(RENDER_TOOLS);
  }
  narrator.step('Using the kustomize and helm built earlier: janus run renders the overlay with them.');
  narrator.detail(
    `${source.binDir} (built by test/kube-testenv/build-render-tools.sh; no Go here to check it is current)`,
  );
  return source.binDir;
}
