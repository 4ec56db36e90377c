/**
 * The crash test of a saga that rolls back: a fifth change is refused at commit, so the four
 * before it are undone. Killed after each API request and restarted, it must still end RolledBack
 * with every target as it was, no false conflict and no leaked Lease.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { failAtCommit } from '../support/cluster/admission.ts';
import { useClients } from '../support/cluster/kube.ts';
import { testNamespace } from '../support/cluster/saga.ts';
import { expectEndsAsBaseline, killedAfterEveryRequest } from '../support/crash/crash.ts';
import { REFUSED_OBJECT, rollingBackScenario } from '../support/crash/crash-scenarios.ts';

const clients = useClients();
const LABEL = { 'janus-test/fail-at-commit': 'crash-rollback' };
let removePolicy: (() => Promise<void>) | undefined;

const freshNamespace = (label: string) =>
  testNamespace(clients.admin, `crash-rollback-${label}`, { labels: LABEL });

afterAll(async () => {
  await removePolicy?.();
});

describe('a rolling-back saga killed after every API request', () => {
  // One saga per API request, each with two controller starts: minutes, not seconds.
  it('ends exactly as an uninterrupted run does, whichever request it dies after', {
    timeout: 1_200_000,
  }, async () => {
    const probe = await freshNamespace('probe');
    removePolicy = await failAtCommit(clients.admin, probe, REFUSED_OBJECT, { matchLabels: LABEL });
    const { baseline, outcomes } = await killedAfterEveryRequest(
      clients.admin,
      clients.kubeconfigs.controller,
      rollingBackScenario(clients.admin),
      freshNamespace,
      (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toMatchObject({
          created: undefined,
          updated: { data: { old: 'value' } },
          patched: { data: { kept: 'yes', changed: 'before' } },
          deleted: { data: { precious: 'data' } },
          refused: undefined,
        });
        return 1;
      },
    );
    expect(outcomes.filter((o) => o.crashed).map((o) => o.k)).toEqual(outcomes.map((o) => o.k));
    expectEndsAsBaseline(outcomes, baseline);
  });
});
