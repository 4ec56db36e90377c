/**
 * Metric analysis in the bake window, the side-effecting part: resolves the checks (templates
 * read with the controller's own rights: they hold no secret; only from the namespaces the
 * platform team's settings allow), refuses them all if one would query an address the settings
 * do not allow, has each one that is due measured (credentials read as the Transaction's
 * ServiceAccount), and keeps the measurements in status.health.analysis. What they mean is
 * src/saga/analysis-window.ts's.
 *
 * The measurements run off the reconcile workers, in the controller's measurement runner
 * (src/runtime/slot-runner.ts): a look starts the due ones not already in flight, takes those
 * that finished, and returns; a measurement that finishes requeues the Transaction. A slow or
 * black-holed address costs its own check's time, never a worker.
 *
 * Crash safety: the verdict comes from the persisted measurements only. The caller writes the
 * status this returns before acting on it; a crash before that write loses the measurements
 * taken (and those in flight), which are simply taken again at the next look (a check is due
 * until one is recorded).
 */
import {
  AnalysisTemplateError,
  checkAddressRefusal,
  measure,
  resolveChecks,
  timeoutFor,
} from '../../analysis/index.ts';
import type { AnalysisCheck, AnalysisCheckStatus, HealthCheckStatus } from '../../api/v1alpha1/index.ts';
import {
  analysisProblem,
  isDue,
  measurementKey,
  nextDueMs,
  recordMeasurement,
  statesOf,
  windowCheckOf,
} from '../../saga/analysis-window.ts';
import type { WindowCheck } from '../../saga/bake-window.ts';
import type { SagaRun } from '../context.ts';

export interface Analysed {
  /** What each check tells the window. */
  checks: WindowCheck[];
  /** status.health with the new measurements. */
  health: HealthCheckStatus | undefined;
  /** A measurement was taken: the status must be written. */
  changed: boolean;
  /** When the first check measures next (ms); a measurement in flight wakes the look itself. */
  dueMs: number | undefined;
}

/** Measures the due checks of an open window ending at `windowEndMs`, as they stand at `now`. */
export async function analyse(
  run: SagaRun,
  health: HealthCheckStatus | undefined,
  now: number,
  windowEndMs: number,
): Promise<Analysed> {
  const refs = run.txn.spec.health?.analysis ?? [];
  if (refs.length === 0) return { checks: [], health, changed: false, dueMs: undefined };
  // The window opens at this look, if at all: the checks measure first at the next one, at once.
  if (!health?.stableSince) return { checks: [], health, changed: false, dueMs: now };
  const namespace = run.txn.metadata.namespace ?? '';
  const { analysis: policy } = run.deps;
  const checks: AnalysisCheck[] = [];
  try {
    for (const ref of refs) checks.push(...(await resolveChecks(ref, namespace, run.deps.objects, policy)));
  } catch (e) {
    if (!(e instanceof AnalysisTemplateError)) throw e;
    return { checks: [definitionFailed(e.message)], health, changed: false, dueMs: undefined };
  }
  // Judged on the filled checks (an argument must not smuggle an address in), before any is
  // measured: an address the platform team did not allow is never requested. The window fails
  // at once, as for a missing template: the settings will not change while it runs, so waiting
  // for its end (as for an inconclusive measurement) would only hold the locks longer.
  const problem =
    analysisProblem(checks) ?? firstOf(checks.map((c) => checkAddressRefusal(c, policy, namespace)));
  if (problem) return { checks: [definitionFailed(problem)], health, changed: false, dueMs: undefined };

  const states = statesOf(checks, health.analysis);
  let changed = states.length !== (health.analysis?.length ?? 0);
  const uid = run.txn.metadata.uid ?? run.name;
  const due = checks.flatMap((check, i) => {
    const state = states[i];
    return state && isDue(state, now) ? [{ check, i, key: measurementKey(uid, state) }] : [];
  });
  const { measurements } = run.deps;
  // A measurement no check waits for any more (a check renamed, a template changed) is dropped.
  measurements.cancel(uid, new Set(due.map((d) => d.key)));
  const inFlight = new Set<number>();
  const objects = run.asServiceAccount();
  for (const { check, i, key } of due) {
    const taken = measurements.take(key);
    if (taken) {
      if (!taken.ok) throw taken.error; // a bug, not a measurement: the reconcile retries
      run.deps.metrics.analysisMeasurement(taken.value.phase);
      states[i] = recordMeasurement(check, states[i] as AnalysisCheckStatus, taken.value, run.deps.now());
      changed = true;
      continue;
    }
    inFlight.add(i);
    measurements.start({
      key,
      owner: uid,
      group: namespace,
      run: (signal) =>
        measure(check, {
          namespace,
          objects,
          policy,
          signal,
          timeoutMs: timeoutFor(policy, namespace),
          now: () => new Date(run.deps.now()),
        }),
      onSettled: () => run.deps.wake(run.name),
    });
  }
  const atEnd = now >= windowEndMs;
  return {
    // At the window's end a check waits for its measurement in flight (the one due then), as it
    // did when the look took it itself: the window does not pass on the one before.
    checks: checks.map((check, i) =>
      windowCheckOf(
        check,
        states[i] ?? { name: check.name, measured: 0, failed: 0 },
        atEnd && !inFlight.has(i),
      ),
    ),
    health: { ...health, analysis: states },
    changed,
    dueMs: nextDueMs(states.filter((_, i) => !inFlight.has(i))),
  };
}

const firstOf = (refusals: (string | undefined)[]) => refusals.find((r) => r !== undefined);

/**
 * The analysis cannot run as declared (a template missing or not allowed, a bad argument, an
 * address not allowed): the window fails.
 */
const definitionFailed = (message: string): WindowCheck => ({ name: 'analysis', state: 'Failed', message });
