/**
 * Where the local control plane's binaries come from. test/kube-testenv/build.sh builds them from
 * pinned Go modules into ${JANUS_CACHE_DIR:-~/.cache/janus}/kube-testenv/<hash>/bin (or
 * $JANUS_KUBE_BIN) and prints that folder; in a source checkout with Go the demo and the tests
 * run it (it skips the build when nothing changed). Without the script or Go, the demo uses the
 * newest complete build in the cache, and says how to make one when there is none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../../..');
export const BUILD_SCRIPT = join(REPO_ROOT, 'test/kube-testenv/build.sh');

/** What the launcher starts; build.sh also builds kubectl, which only the tests use. */
const REQUIRED = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.JANUS_CACHE_DIR ?? join(homedir(), '.cache/janus'), 'kube-testenv');
}

/** Runs build.sh (a build, or nothing when up to date) and returns the binary folder it prints. */
export function buildControlPlane(): string {
  const out = execFileSync('bash', [BUILD_SCRIPT], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop() ?? '';
}

/** A folder build.sh finished (it writes .complete last) holding every binary the launcher starts. */
export function isCompleteBuild(binDir: string): boolean {
  return existsSync(join(binDir, '.complete')) && REQUIRED.every((name) => existsSync(join(binDir, name)));
}

/** The newest complete build in the cache ($JANUS_KUBE_BIN if set), if any. */
export function cachedBinaries(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.JANUS_KUBE_BIN) return isCompleteBuild(env.JANUS_KUBE_BIN) ? env.JANUS_KUBE_BIN : undefined;
  const root = cacheRoot(env);
  const builds = existsSync(root)
    ? readdirSync(root)
        .map((entry) => join(root, entry, 'bin'))
        .filter(isCompleteBuild)
    : [];
  return builds.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** How the demo gets its binaries: build.sh when it can run it, else a cached build, else nothing. */
export type BinarySource = { build: true } | { build: false; binDir: string } | { missing: string };

export function binarySource(
  facts: { buildScript: boolean; go: boolean; cached: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): BinarySource {
  if (facts.buildScript && facts.go) return { build: true };
  if (facts.cached) return { build: false, binDir: facts.cached };
  const where = env.JANUS_KUBE_BIN ?? join(cacheRoot(env), '<hash>/bin');
  const how = facts.buildScript
    ? `install Go, then run \`npm run kube:build\` (bash ${BUILD_SCRIPT})`
    : 'run `npm run kube:build` (bash test/kube-testenv/build.sh, needs Go) in a source checkout of Janus, with the same JANUS_CACHE_DIR';
  return {
    missing: `the local control plane's binaries (${REQUIRED.join(', ')}) are not in ${where}: ${how}; or pass --kubeconfig to use an existing cluster`,
  };
}
