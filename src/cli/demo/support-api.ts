/**
 * What the demo uses of test/support (the control-plane launcher and the manifest helpers the
 * integration tests use), loaded at run time from a source checkout. Declared here rather than
 * imported as types so that src/ compiles on its own (npm run build, the container image);
 * test/unit/cli/demo-support.test.ts checks that test/support still fits.
 */
import type { KubeObject, Objects } from '../../kube/resources.ts';

export interface ControlPlaneApi {
  /** Builds (or finds cached) the control plane's binaries; returns their directory. */
  buildControlPlane(): string;
  startControlPlane(opts: { binDir: string }): Promise<{
    readonly server: string;
    readonly kubeconfigs: { readonly admin: string; readonly controller: string };
    stop(): Promise<void>;
  }>;
}

export interface ManifestsApi {
  readManifests(...paths: string[]): Promise<KubeObject[]>;
  applyManifests(objects: Objects, manifests: KubeObject[]): Promise<void>;
}

export interface TestEnvApi {
  /** The CRD, the janus-system namespace and the controller's RBAC, from manifests/. */
  controllerManifests(): Promise<KubeObject[]>;
}
