/**
 * Where the local control plane's binaries come from: test/kube-testenv/build.sh builds them from
 * pinned Go modules into ${JANUS_CACHE_DIR:-~/.cache/janus}/kube-testenv/<hash>/bin (or
 * $JANUS_KUBE_BIN), found as built-tools.ts says.
 */
import { REPO_ROOT, runBuild, type ToolBuild } from './built-tools.ts';

export { REPO_ROOT };

export const CONTROL_PLANE: ToolBuild = {
  what: "the local control plane's binaries",
  script: 'test/kube-testenv/build.sh',
  cache: 'kube-testenv',
  override: 'JANUS_KUBE_BIN',
  npmScript: 'kube:build',
  // What the launcher starts; build.sh also builds kubectl, which only the tests use.
  required: ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'],
  otherwise: 'or pass --kubeconfig to use an existing cluster',
};

/** Runs build.sh (a build, or nothing when up to date) and returns the binary folder it prints. */
export const buildControlPlane = (): string => runBuild(CONTROL_PLANE);
