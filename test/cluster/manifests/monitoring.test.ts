/**
 * manifests/monitoring ships alerts and a dashboard built on the documented metrics. Every metric
 * they name, and every label they select on, must be one a running `janus run` really exports:
 * a renamed metric would otherwise leave an alert silently never firing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { pushCommit } from '../../support/git/git-server.ts';
import { useGitServer, useJanus } from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'monitoring');
const server = useGitServer();
const janus = useJanus(clients);
const kube = inject('kube');
const kubectlPath = kube.binDir ? join(kube.binDir, 'kubectl') : 'kubectl';

interface Rule {
  alert: string;
  expr: string;
}

function rendered(): Record<string, unknown>[] {
  const out = spawnSync(kubectlPath, ['kustomize', join(REPO_ROOT, 'manifests/monitoring')], {
    encoding: 'utf8',
  });
  expect(out.stderr).toBe('');
  return parseAllDocuments(out.stdout).map((d) => d.toJSON() as Record<string, unknown>);
}

/** Every expression of the rule and the dashboard, named for the failure message. */
function expressions(docs: Record<string, unknown>[]): [string, string][] {
  const out: [string, string][] = [];
  for (const doc of docs) {
    if (doc.kind === 'PrometheusRule') {
      const groups = (doc.spec as { groups: { rules: Rule[] }[] }).groups;
      for (const rule of groups.flatMap((g) => g.rules)) out.push([`alert ${rule.alert}`, rule.expr]);
    }
    if (doc.kind === 'ConfigMap') {
      const dashboard = JSON.parse((doc.data as Record<string, string>)['janus-dashboard.json'] ?? '{}') as {
        panels: { title: string; targets: { expr: string }[] }[];
      };
      for (const panel of dashboard.panels)
        for (const t of panel.targets) out.push([`panel "${panel.title}"`, t.expr]);
    }
  }
  return out;
}

/** Metric families a scrape shows, each with the label names its samples carry. */
function families(scrape: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of scrape.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? /.exec(line);
    if (!sample?.[1]) continue;
    const labels = out.get(sample[1]) ?? new Set<string>();
    for (const pair of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g))
      if (pair[1]) labels.add(pair[1]);
    out.set(sample[1], labels);
  }
  return out;
}

describe('manifests/monitoring', () => {
  it('renders a PrometheusRule and a dashboard ConfigMap for the Grafana sidecar', () => {
    const docs = rendered();
    expect(docs.map((d) => d.kind).sort()).toEqual(['ConfigMap', 'PrometheusRule']);
    const cm = docs.find((d) => d.kind === 'ConfigMap') as { metadata: { labels: Record<string, string> } };
    expect(cm.metadata.labels.grafana_dashboard).toBe('1');
    const alerts = expressions(docs).filter(([where]) => where.startsWith('alert'));
    expect(alerts.map(([where]) => where)).toEqual(
      expect.arrayContaining([
        'alert JanusTransactionFailed',
        'alert JanusRollbackConflict',
        'alert JanusGitUnreachable',
        'alert JanusResultsNotPushed',
        'alert JanusNotificationsFailing',
      ]),
    );
  });

  it('names only metrics and labels that janus run exports (scraped)', async () => {
    // An owner/name path, as a forge has, so that commit statuses can be on.
    const name = `acme/monitoring-${process.pid}`;
    await pushCommit(await server.server.createRepo(name), 'main', { 'README.md': 'x\n' }, 'initial');
    const repo = { url: server.server.url(name) };
    // Commit statuses on (to a forge never called: no Transaction here), so their metric is exported.
    const token = join(await mkdtemp(join(tmpdir(), 'janus-status-token-')), 'token');
    await writeFile(token, 'unused\n');
    // Notifications on, with one provider (never called): its counters are exported at zero.
    const notifications = join(dirname(token), 'notifications.yaml');
    await writeFile(
      notifications,
      'providers: [{name: audit, type: slack, address: "http://127.0.0.1:9/never"}]\nroutes: [{providers: [audit]}]\n',
    );
    const statuses = [
      '--commit-status-token-file',
      token,
      '--commit-status-provider',
      'gitea',
      '--allow-insecure-http',
      '--notifications-config',
      notifications,
    ];
    const run = await janus.start({ repo: repo.url, namespace: ns.name, pollInterval: '1h', args: statuses });
    const exported = families(await (await fetch(`${await run.opsUrl()}/metrics`)).text());
    expect(exported.size).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const [where, expr] of expressions(rendered())) {
      for (const m of expr.matchAll(/\b(janus_[a-z0-9_]+)(\{([^}]*)\})?/g)) {
        const [, name = '', , selector = ''] = m;
        const labels = exported.get(name);
        if (!labels) {
          problems.push(`${where}: ${name} is not exported`);
          continue;
        }
        for (const label of selector.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)) {
          const key = label[1] ?? '';
          // job is added by Prometheus at scrape time; le is every histogram bucket's.
          if (key !== 'job' && !labels.has(key)) problems.push(`${where}: ${name} has no label ${key}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
