import { describe, expect, it } from 'vitest';
import type { ControlPlaneApi, ManifestsApi, TestEnvApi } from '../../../src/cli/demo/support-api.ts';
import * as controlPlane from '../../support/control-plane.ts';
import * as manifests from '../../support/manifests.ts';
import * as testEnv from '../../support/test-env.ts';

// The demo loads these modules at run time by path; the assignments fail typechecking (npm run
// lint) as soon as test/support no longer offers what the demo declares it uses.
const support: [ControlPlaneApi, ManifestsApi, TestEnvApi] = [controlPlane, manifests, testEnv];

describe('what janus demo uses of test/support', () => {
  it('is there, with the functions the demo calls', () => {
    const [plane, files, env] = support;
    for (const fn of [
      plane.buildControlPlane,
      plane.startControlPlane,
      files.readManifests,
      files.applyManifests,
      env.controllerManifests,
    ]) {
      expect(typeof fn).toBe('function');
    }
  });
});
