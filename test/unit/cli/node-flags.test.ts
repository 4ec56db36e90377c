import { describe, expect, it } from 'vitest';
import {
  LONG_RUNNING_COMMANDS,
  LONG_RUNNING_NODE_FLAGS,
  missingNodeFlags,
  nodeFlagsFor,
} from '../../../src/cli/node-flags.ts';
import { COMMANDS } from '../../../src/cli/registry.ts';

describe('Node flags per kind of process', () => {
  it('tunes run and controller for memory, and leaves every one-shot command to V8 defaults', () => {
    expect(nodeFlagsFor('run')).toEqual(LONG_RUNNING_NODE_FLAGS);
    expect(nodeFlagsFor('controller')).toEqual(LONG_RUNNING_NODE_FLAGS);
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
    expect(missingNodeFlags('run', [])).toEqual(LONG_RUNNING_NODE_FLAGS);
    expect(missingNodeFlags('run', ['--inspect', ...LONG_RUNNING_NODE_FLAGS])).toEqual([]);
    expect(missingNodeFlags('run', ['--optimize-for-size'])).not.toContain('--optimize-for-size');
    expect(missingNodeFlags('validate', ['--inspect'])).toEqual([]);
  });
});
