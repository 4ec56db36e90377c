import { describe, expect, it } from 'vitest';
import { type PodView, rolloutLine, runsImage } from '../../../src/cli/demo/rollout.ts';

const pod = (image: string, ready: boolean, deleting = false): PodView => ({
  metadata: { name: `web-${image}`, ...(deleting && { deletionTimestamp: '2026-01-01T00:00:00Z' }) },
  spec: { containers: [{ image: `ghcr.io/stefanprodan/${image}` }] },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe("the demo's rollout narration", () => {
  it('groups the live pods by readiness and image, ready first', () => {
    const pods = [pod('podinfo:6.7.0', true), pod('podinfo:6.7.1', false), pod('podinfo:6.7.0', true)];
    expect(rolloutLine(pods)).toBe(
      'web pods: 2 ready, image podinfo:6.7.0; 1 not ready, image podinfo:6.7.1',
    );
  });

  it('leaves out pods being deleted', () => {
    expect(rolloutLine([pod('podinfo:6.6.0', true, true)])).toBe('web pods: none');
  });

  it('waits for a live pod of the new image: the template changes before its pod exists', () => {
    const image = 'ghcr.io/stefanprodan/podinfo:6.7.1';
    const before = [pod('podinfo:6.7.0', true), pod('podinfo:6.7.0', true)];
    expect(runsImage(before, image)).toBe(false);
    expect(runsImage([...before, pod('podinfo:6.7.1', false, true)], image)).toBe(false);
    expect(runsImage([...before, pod('podinfo:6.7.1', false)], image)).toBe(true);
    expect(runsImage(before, undefined)).toBe(false);
  });
});
