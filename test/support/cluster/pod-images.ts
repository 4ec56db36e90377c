/**
 * Container images that make the test control plane's simulated pods (kwok) behave a given way;
 * the stages in src/cli/demo/kwok-stages.yaml match them (see test/kube-testenv/README.md).
 * No image is ever pulled: kwok only plays the pod's lifecycle.
 */
export const POD_IMAGES = {
  /** Running and Ready shortly after it is scheduled. */
  ready: 'registry.example/web:v1',
  /** Another version that becomes Ready, for a rollout that succeeds. */
  readyAlternative: 'registry.example/web:v2',
  /** Running, never Ready (a readiness probe that keeps failing). */
  neverReady: 'registry.example/web:never-ready',
  /** Container restarting: waiting in CrashLoopBackOff. */
  crashLoop: 'registry.example/web:crash-loop',
  /**
   * Running and Ready, then 10 s after it became Ready waiting in CrashLoopBackOff (restartCount
   * 3): a release that passes its readiness probe and fails later (the bake window's case).
   */
  flapping: 'registry.example/web:flapping',
  /** Container waiting in ImagePullBackOff. */
  imagePullError: 'registry.example/web:image-pull-error',
} as const;
