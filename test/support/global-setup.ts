/** vitest globalSetup of the integration project: one cluster per run, shared by every test file. */
import type { TestProject } from 'vitest/node';
import { buildDist } from './build.ts';
import { useScratchTmp } from './scratch-tmp.ts';
import { type KubeTestInfo, startTestEnvironment } from './test-env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kube: KubeTestInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const removeScratch = useScratchTmp('test');
  buildDist(); // janus run and janus controller start from the compiled entry point, as in the image
  const env = await startTestEnvironment();
  project.provide('kube', env.info);
  return async () => {
    await env.stop();
    removeScratch();
  };
}
