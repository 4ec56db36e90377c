import { describe, expect, it } from 'vitest';
import {
  CONTROLLER_NODE_FLAGS,
  environmentFor,
  LONG_RUNNING_COMMANDS,
  missingEnvironment,
  missingNodeFlags,
  nodeFlagsFor,
  RUN_ENVIRONMENT,
  RUN_NODE_FLAGS,
} from '../../../src/cli/node-flags.ts';
import { COMMANDS } from '../../../src/cli/registry.ts';

describe('Node flags per kind of process', () => {
  it('tunes the controller for memory, keeps the JIT for run and leaves one-shot commands to V8 defaults', () => {
    expect(nodeFlagsFor('controller')).toEqual(CONTROLLER_NODE_FLAGS);
    expect(CONTROLLER_NODE_FLAGS).toContain('--no-turbofan');
    // janus run parses YAML from Git: without the JIT a 400-directory commit costs 3x the CPU.
    expect(nodeFlagsFor('run')).toEqual(RUN_NODE_FLAGS);
    for (const flag of ['--no-sparkplug', '--no-maglev', '--no-turbofan', '--optimize-for-size'])
      expect(RUN_NODE_FLAGS).not.toContain(flag);
    for (const name of ['validate', 'plan', 'status', 'history', 'trace', 'wait', 'demo', 'poll']) {
      expect(nodeFlagsFor(name), name).toEqual([]);
    }
    expect(nodeFlagsFor(undefined)).toEqual([]);
    expect(nodeFlagsFor('--help')).toEqual([]);
  });

  it('names only commands that exist', () => {
    const names = COMMANDS.map((c) => c.name);
    for (const name of LONG_RUNNING_COMMANDS) expect(names).toContain(name);
  });

  it('asks for a re-exec only when a flag is missing, so the launcher never loops', () => {
    expect(missingNodeFlags('controller', [])).toEqual(CONTROLLER_NODE_FLAGS);
    expect(missingNodeFlags('controller', ['--inspect', ...CONTROLLER_NODE_FLAGS])).toEqual([]);
    expect(missingNodeFlags('controller', ['--optimize-for-size'])).not.toContain('--optimize-for-size');
    expect(missingNodeFlags('run', [...RUN_NODE_FLAGS])).toEqual([]);
    expect(missingNodeFlags('validate', ['--inspect'])).toEqual([]);
  });

  it("gives janus run glibc's malloc setting, leaves a user's own and asks again only when it lacks one", () => {
    expect(environmentFor('run')).toEqual({ MALLOC_MMAP_THRESHOLD_: '32768' });
    for (const name of ['controller', 'validate', 'plan', 'demo', undefined])
      expect(environmentFor(name)).toEqual({});
    expect(missingEnvironment('run', {})).toEqual(RUN_ENVIRONMENT);
    expect(missingEnvironment('run', { ...RUN_ENVIRONMENT })).toEqual({});
    expect(missingEnvironment('run', { MALLOC_MMAP_THRESHOLD_: '131072' })).toEqual({});
    expect(missingEnvironment('run', { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' })).toEqual({});
    expect(missingEnvironment('controller', {})).toEqual({});
  });
});
