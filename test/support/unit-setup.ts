/** vitest globalSetup of the unit project: its temporary files in one directory, removed at the end. */
import { useScratchTmp } from './scratch-tmp.ts';

export default function setup(): () => void {
  return useScratchTmp('test');
}
