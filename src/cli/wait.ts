/** Waiting for a Transaction to reach an outcome (`--wait`), reporting each phase it passes. */

import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { durationFlag, type Flags, UsageError } from './command.ts';
import { onInterrupt } from './interrupt.ts';
import type { Sink } from './output.ts';
import { observeTransactions } from './transactions.ts';

export const WAIT_FLAGS = {
  wait: {
    type: 'boolean',
    env: 'JANUS_WAIT',
    description: 'wait until the rollback has ended, and exit 0 if RolledBack, 1 otherwise',
  },
  timeout: {
    type: 'string',
    env: 'JANUS_WAIT_TIMEOUT',
    default: '10m',
    placeholder: 'duration',
    description: 'how long --wait waits before giving up (exit 1)',
  },
} as const satisfies Flags;

export function parseTimeout(value: string): number {
  return durationFlag(value, 'timeout');
}

/** "RollingBack (RollbackRequested)" — what a phase line says. */
function phaseLine(txn: Transaction): string {
  const reconciling = txn.status?.conditions?.find((c) => c.type === 'Reconciling' && c.status === 'True');
  const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
  const reason = reconciling?.reason ?? ready?.reason;
  return `${txn.metadata.namespace}/${txn.metadata.name}: ${txn.status?.phase ?? 'Pending'}${reason ? ` (${reason})` : ''}`;
}

/**
 * Watches the Transaction until `outcome` returns something; prints each new phase on `progress`.
 * Throws a UsageError with exit status 1 on timeout or Ctrl-C.
 */
export async function waitForOutcome<R>(opts: {
  client: KubeClient;
  namespace: string;
  name: string;
  timeoutMs: number;
  progress: Sink;
  outcome: (txn: Transaction | undefined) => R | undefined;
}): Promise<R> {
  const interrupt = onInterrupt(opts.timeoutMs);
  let lastLine = '';
  try {
    const scope = { namespace: opts.namespace, name: opts.name };
    for await (const [txn] of observeTransactions(opts.client, scope, interrupt.signal)) {
      if (txn) {
        const line = phaseLine(txn);
        if (line !== lastLine) opts.progress.write(`${line}\n`);
        lastLine = line;
      }
      const result = opts.outcome(txn);
      if (result !== undefined) return result;
    }
  } finally {
    interrupt.dispose();
  }
  const why = interrupt.reason() === 'timeout' ? `still not finished after --timeout` : 'interrupted';
  throw new UsageError(
    `${opts.namespace}/${opts.name}: ${why}; follow it with: janus status ${opts.name} -n ${opts.namespace} --watch`,
    1,
  );
}
