/**
 * A Git repository's side of Janus, as users write it: transaction directories and their change
 * files; and how many polls a `janus run` process has made of it. Shared by the Git integration
 * tests and the benchmarks (so no test-runner imports here).
 */
import type { JanusRunProcess } from '../processes/janus-run.ts';

export interface DirectoryOptions {
  namespace?: string;
  serviceAccount?: string;
  /** Change files by name, e.g. { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) }. */
  changes: Record<string, string>;
  /** Extra files, e.g. { ROLLBACK: 'reason' }. */
  extra?: Record<string, string>;
}

/** The files of transactions/<name>/. */
export function directory(name: string, opts: DirectoryOptions): Record<string, string> {
  const namespace = opts.namespace ? `\n  namespace: ${opts.namespace}` : '';
  const files: Record<string, string> = {
    [`transactions/${name}/transaction.yaml`]:
      `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}${namespace}\n` +
      `spec:\n  serviceAccountName: ${opts.serviceAccount ?? 'deployer'}\n  timeout: 2m\n`,
  };
  for (const [file, content] of Object.entries({ ...opts.changes, ...opts.extra })) {
    files[`transactions/${name}/${file}`] = content;
  }
  return files;
}

/** A ConfigMap manifest, as a change file holds it. */
export function configMapYaml(name: string, data: Record<string, string>): string {
  const entries = Object.entries(data)
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${entries}\n`;
}

/** Successful polls so far, read from the process's /metrics. */
export async function successfulPolls(janus: JanusRunProcess): Promise<number> {
  const text = await (await fetch(`${await janus.opsUrl()}/metrics`)).text();
  return Number(/^janus_git_polls_total\{result="success"\} (\d+)/m.exec(text)?.[1] ?? 0);
}
