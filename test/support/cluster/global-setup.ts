/**
 * vitest globalSetup of the cluster and crash tiers: one control plane per run, shared by both
 * tiers and every test file in them. Vitest runs each project's global setup in the one main
 * process, so the environment is kept on globalThis and stopped when the last tier is done.
 */
import type { TestProject } from 'vitest/node';
import { buildDist } from '../processes/build.ts';
import { useScratchTmp } from '../scratch-tmp.ts';
import { type KubeTestInfo, startTestEnvironment, type TestEnvironment } from './test-env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kube: KubeTestInfo;
  }
}

interface Shared {
  environment: Promise<TestEnvironment>;
  users: number;
  removeScratch: () => void;
}

const KEY = Symbol.for('janus.test.cluster');
const holder = globalThis as { [KEY]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!holder[KEY]) {
    const removeScratch = useScratchTmp('test');
    buildDist(); // janus run and janus controller start from the compiled entry point, as in the image
    holder[KEY] = { environment: startTestEnvironment(), users: 0, removeScratch };
  }
  const shared = holder[KEY];
  shared.users++;
  project.provide('kube', (await shared.environment).info);
  return async () => {
    if (--shared.users > 0) return;
    delete holder[KEY];
    await (await shared.environment).stop();
    shared.removeScratch();
  };
}
