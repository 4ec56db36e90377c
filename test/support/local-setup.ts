/**
 * vitest globalSetup of the local tier (real tools, no cluster): its temporary files in one
 * directory, and dist/ compiled once, since some of its tests start the entry point that ships.
 */
import { buildDist } from './processes/build.ts';
import { useScratchTmp } from './scratch-tmp.ts';

export default function setup(): () => void {
  const removeScratch = useScratchTmp('test');
  buildDist();
  return removeScratch;
}
