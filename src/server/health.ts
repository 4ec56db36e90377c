/**
 * Health checks and their report, in kube-apiserver's verbose format:
 *
 *     [+]informers-synced ok
 *     [-]git-reachable failed: fetch https://git.example.com/org/repo: ECONNREFUSED
 *     readyz check failed
 */

export interface CheckResult {
  readonly ok: boolean;
  /** Why it failed, or what it saw; one line. */
  readonly detail: string;
  /** Shown after "ok" when it passed: something an operator should know though nothing failed. */
  readonly note?: string;
}

/**
 * A check reads state that the process keeps up to date anyway (a flag, a timestamp): probes
 * arrive every few seconds from the kubelet, so a check must not do I/O of its own.
 */
export type Check = () => CheckResult;

export interface NamedCheck {
  /** Lowercase with dashes, e.g. `informers-synced`, `leader-or-standby`, `git-reachable`. */
  readonly name: string;
  readonly check: Check;
}

export interface HealthChecks {
  /**
   * Liveness (`/healthz`, `/livez`): the event loop answers and the essential loops (informers,
   * poller, lease renewal) still run. Fail it only when a restart would help; an unreachable
   * Git host or API server is a readiness matter, or every replica restarts at once.
   */
  readonly live: Check;
  /** Readiness (`/readyz`): every check must pass before the pod receives webhooks. */
  readonly ready: readonly NamedCheck[];
}

export interface CheckReport {
  readonly ok: boolean;
  /** The plain-text body: one `[+]`/`[-]` line per check, then a verdict line. */
  readonly text: string;
}

/** Runs every check (a failing one does not hide the others) and formats the report for `endpoint`. */
export function runChecks(endpoint: string, checks: readonly NamedCheck[]): CheckReport {
  const results = checks.map(({ name, check }) => ({ name, result: safely(check) }));
  const ok = results.every(({ result }) => result.ok);
  const lines = results.map(({ name, result }) =>
    result.ok
      ? `[+]${name} ok${result.note ? `: ${oneLine(result.note)}` : ''}`
      : `[-]${name} failed: ${oneLine(result.detail)}`,
  );
  lines.push(`${endpoint} check ${ok ? 'passed' : 'failed'}`);
  return { ok, text: `${lines.join('\n')}\n` };
}

/** A check that throws has failed; it must not turn the probe into a 500 or hide other checks. */
function safely(check: Check): CheckResult {
  try {
    return check();
  } catch (error) {
    return { ok: false, detail: `check threw: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim() || 'no detail';
}
