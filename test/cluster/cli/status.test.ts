/** `janus status` against a real API server and a real controller. */
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { configMap, transaction } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus, parseJsonStream, startJanus } from '../../support/processes/cli.ts';
import { committedTransaction, useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-status');
const as = () => ({ kubeconfig: clients.kubeconfigs.admin });

describe('janus status', () => {
  it('says when a namespace has no Transactions', async () => {
    // Another test file may suspend a Git side in janus-system meanwhile: its line is not this test's.
    const result = await janus(['status', '-n', ns.name, '--controller-namespace', ns.name], as());
    expect(result.stderr).toBe(`No Transactions found in namespace ${ns.name}.\n`);
    expect(result).toMatchObject({ code: 0, stdout: '' });
  });

  it('lists Transactions with phase, committed/total, age and Ready reason, on stderr', async () => {
    await committedTransaction(clients, ns.name, 'listed');
    const result = await janus(['status', '-n', ns.name], as());
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const [header, ...rows] = result.stderr.trimEnd().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAMESPACE', 'NAME', 'PHASE', 'CHANGES', 'AGE', 'REASON']);
    const row = rows.find((r) => r.includes(' listed '))?.split(/\s+/);
    expect(row).toEqual([
      ns.name,
      'listed',
      'Committed',
      '2/2',
      expect.stringMatching(/^\d+s$/),
      'Committed',
    ]);
  });

  it('shows one Transaction in detail: changes, conditions, events and what to do next', async () => {
    await committedTransaction(clients, ns.name, 'detailed');
    const result = await janus(['status', 'detailed', '-n', ns.name], as());
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Phase:\s+Committed/);
    expect(result.stderr).toMatch(/0\s+Patch\s+v1 ConfigMap \S+\/detailed-a\s+committed/);
    expect(result.stderr).toMatch(/1\s+Patch\s+v1 ConfigMap \S+\/detailed-b\s+committed/);
    expect(result.stderr).toMatch(/Conditions:\n\s+TYPE\s+STATUS/);
    expect(result.stderr).toMatch(/Events:[\s\S]*Committed/);
    expect(result.stderr).toContain(`janus rollback detailed -n ${ns.name}`);
  });

  it('prints the objects on stdout with -o json or yaml, and nothing for people', async () => {
    await committedTransaction(clients, ns.name, 'machine');
    const one = await janus(['status', 'machine', '-n', ns.name, '-o', 'json'], as());
    expect(one.stderr).toBe('');
    expect((JSON.parse(one.stdout) as Transaction).status?.phase).toBe('Committed');
    const all = await janus(['status', '-A', '-o', 'yaml'], as());
    const list = parseYaml(all.stdout) as { kind: string; items: Transaction[] };
    expect(list.kind).toBe('List');
    expect(list.items.map((t) => `${t.metadata.namespace}/${t.metadata.name}`)).toContain(
      `${ns.name}/machine`,
    );
  });

  it("uses the kubeconfig context's namespace when -n is not given", async () => {
    await committedTransaction(clients, ns.name, 'context');
    const kc = parseYaml(await readFile(clients.kubeconfigs.admin, 'utf8')) as {
      'current-context': string;
      contexts: { name: string; context: { namespace?: string } }[];
    };
    const current = kc.contexts.find((c) => c.name === kc['current-context']);
    if (!current) throw new Error('no context');
    current.context.namespace = ns.name;
    const path = join(tmpdir(), `janus-status-${ns.name}.kubeconfig`);
    await writeFile(path, stringifyYaml(kc));
    const result = await janus(['status'], { kubeconfig: path });
    expect(result.stderr).toMatch(/ context /);
  });

  it('exits 2 naming what it did not find, and 1 when the API server refuses', async () => {
    const missing = await janus(['status', 'nope', '-n', ns.name], as());
    expect(missing).toMatchObject({
      code: 2,
      stderr: `janus: Transaction ${ns.name}/nope not found. If it finished a while ago, the retention policy may have pruned it: its record stays on the results branch (janus history ${ns.name}/nope)\n`,
    });
    const forbidden = await janus(['status', '-n', ns.name], { kubeconfig: clients.kubeconfigs.alice });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^janus: GET \S+: 403 Forbidden: .*alice/);
    expect(forbidden.stderr).not.toContain('    at '); // no stack trace
  });

  it('--watch shows each change as it happens, until Ctrl-C', async () => {
    const watching = startJanus(['status', '-n', ns.name, '--watch'], as());
    await eventually(() => expect(watching.stderr()).toMatch(/^NAMESPACE/));
    await clients.admin.create(configMap(ns.name, 'watched-a', { value: 'before' }));
    await clients.admin.create(
      transaction(ns.name, 'watched', [
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'watched-a' },
          type: 'Patch',
          content: { data: { v: '2' } },
        },
      ]),
    );
    await eventually(() => expect(watching.stderr()).toMatch(/ watched\s+Committed\s+1\/1 /), {
      timeoutMs: 90_000,
    });
    // Appended in a pipe: the earlier phases are still there.
    expect(watching.stderr()).toMatch(/ watched\s+(Pending|Preparing|Committing)\s/);
    watching.child.kill('SIGINT');
    expect((await watching.exited).code).toBe(0);
  });

  it('--watch -o json prints the Transaction each time it changes', async () => {
    // A watch of a name that does not exist is an error, as without --watch.
    const missing = await janus(['status', 'streamed', '-n', ns.name, '--watch', '-o', 'json'], as());
    expect(missing).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `janus: Transaction ${ns.name}/streamed not found. If it finished a while ago, the retention policy may have pruned it: its record stays on the results branch (janus history ${ns.name}/streamed)\n`,
    });

    await committedTransaction(clients, ns.name, 'streamed');
    const again = startJanus(['status', 'streamed', '-n', ns.name, '--watch', '-o', 'json'], as());
    await eventually(() => expect(again.stdout()).toContain('"Committed"'));
    await clients.admin.patch(
      { apiVersion: 'tx.janus.io/v1alpha1', kind: 'Transaction', name: 'streamed', namespace: ns.name },
      { metadata: { labels: { seen: 'twice' } } },
      'application/merge-patch+json',
    );
    await eventually(() => expect(parseJsonStream(again.stdout())).toHaveLength(2));
    const [first, second] = parseJsonStream(again.stdout()) as Transaction[];
    expect(first?.metadata.labels?.seen).toBeUndefined();
    expect(second?.metadata.labels?.seen).toBe('twice');
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
  });
});
