/**
 * Tools the demo builds from pinned Go modules, with a script of test/kube-testenv/: the local
 * control plane (build.sh) and the render tools of sources, kustomize and helm
 * (build-render-tools.sh). Each script builds into ${JANUS_CACHE_DIR:-~/.cache/janus}/<cache>/<hash>/bin
 * (or the folder its override variable names) and prints that folder; in a source checkout with
 * Go the demo runs it (it skips the build when nothing changed). Without the script or Go, the
 * demo uses the newest complete build in the cache, and says how to make one when there is none.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../../..');

export interface ToolBuild {
  /** What it is, for messages: "the local control plane's binaries". */
  what: string;
  /** The script, from the repository's root. */
  script: string;
  /** Its folder under the cache. */
  cache: string;
  /** The variable that names the output folder instead. */
  override: 'JANUS_KUBE_BIN' | 'JANUS_RENDER_TOOLS_BIN';
  /** The npm script that runs it. */
  npmScript: string;
  /** What the demo needs of what it builds. */
  required: readonly string[];
  /** Another way round, said when there is no build: "or pass --kubeconfig …". */
  otherwise?: string;
}

export const scriptPath = (build: ToolBuild) => join(REPO_ROOT, build.script);

export function cacheRoot(build: ToolBuild, env: NodeJS.ProcessEnv = process.env): string {
  return join(env.JANUS_CACHE_DIR ?? join(homedir(), '.cache/janus'), build.cache);
}

/** Runs the script (a build, or nothing when up to date) and returns the binary folder it prints. */
export function runBuild(build: ToolBuild): string {
  const out = execFileSync('bash', [scriptPath(build)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop() ?? '';
}

/** A folder the script finished (it writes .complete last) holding every binary the demo needs. */
export function isCompleteBuild(build: ToolBuild, binDir: string): boolean {
  return (
    existsSync(join(binDir, '.complete')) && build.required.every((name) => existsSync(join(binDir, name)))
  );
}

/** The newest complete build in the cache (the override folder if set), if any. */
export function cachedBuild(build: ToolBuild, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const override = env[build.override];
  if (override) return isCompleteBuild(build, override) ? override : undefined;
  const root = cacheRoot(build, env);
  const builds = existsSync(root)
    ? readdirSync(root)
        .map((entry) => join(root, entry, 'bin'))
        .filter((dir) => isCompleteBuild(build, dir))
    : [];
  return builds.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** How the demo gets the binaries: the script when it can run it, else a cached build, else nothing. */
export type BinarySource = { build: true } | { build: false; binDir: string } | { missing: string };

export function binarySource(
  build: ToolBuild,
  facts: { buildScript: boolean; go: boolean; cached: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): BinarySource {
  if (facts.buildScript && facts.go) return { build: true };
  if (facts.cached) return { build: false, binDir: facts.cached };
  const where = env[build.override] ?? join(cacheRoot(build, env), '<hash>/bin');
  const how = facts.buildScript
    ? `install Go, then run \`npm run ${build.npmScript}\` (bash ${scriptPath(build)})`
    : `run \`npm run ${build.npmScript}\` (bash ${build.script}, needs Go) in a source checkout of Janus, with the same JANUS_CACHE_DIR`;
  const otherwise = build.otherwise ? `; ${build.otherwise}` : '';
  return {
    missing: `${build.what} (${build.required.join(', ')}) are not in ${where}: ${how}${otherwise}`,
  };
}

/** binarySource with the facts of this machine: is the script there, is Go, what is in the cache. */
export function locateBuild(build: ToolBuild): BinarySource {
  return binarySource(build, {
    buildScript: existsSync(scriptPath(build)),
    go: onPath('go', ['version']),
    cached: cachedBuild(build),
  });
}

export function onPath(tool: string, args: string[]): boolean {
  return spawnSync(tool, args, { stdio: 'ignore' }).status === 0;
}
