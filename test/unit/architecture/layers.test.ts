/**
 * The layer order of src/: every folder has a layer, and a module imports only from its own
 * layer or a lower one. Import cycles between files, type-only ones included, are Biome's
 * (suspicious/noImportCycles with ignoreTypes off, in `npm run lint`); this test keeps the
 * folders in one direction, which Biome cannot see: results importing gitops' parser while
 * gitops imports results is no file cycle, but it is a tangle.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderOf, importsBelow, type ModuleImport } from './imports.ts';

/** src/'s folders by layer, lowest first, and each folder's job. */
const LAYERS: readonly Readonly<Record<string, string>>[] = [
  {
    '.': 'the files in src/ itself: the version, the Node built-ins loaded with require',
    text: 'text from others made safe to print on a terminal; namespace globs',
    log: 'the logger, and how an error becomes text (expected or a bug; network codes)',
  },
  { api: 'the Transaction API: CRD schema and types, object metadata, labels, durations, fitting' },
  { kube: 'the Kubernetes client: connection, credentials, errors, discovery, Events' },
  {
    yaml: 'YAML parsing with limits against hostile input, and the diagnostics it reports',
    git: 'Git repositories: fetch, push, objects, trees, transports, errors',
    runtime: 'client-go machinery: informer, work queue, leader election, backoff',
    health: 'the kstatus health rules per kind (pure)',
    webhook: 'Git push webhooks: signature, providers, which delivery triggers a poll',
    analysis: 'metric analysis: checks measured (Prometheus, HTTP), their verdict, templates',
    sops: 'SOPS-encrypted documents: structure, age data key, values decrypted, MAC verified',
    render:
      'sources rendered by the real kustomize and helm, sandboxed and bounded, or read as plain manifests',
  },
  {
    server: 'the operations server: health checks, metrics endpoint, webhook endpoint',
    metrics: 'the Prometheus instruments',
  },
  {
    saga: "decide(): the saga's next step, the phase graph, conditions, undo rules, targets (pure)",
    locks: 'the Leases that lock targets',
    'rollback-store': 'the prior state of every target, kept in ConfigMaps and Secrets',
    retention: 'which finished Transactions the policy prunes, and the sweep that deletes them',
  },
  { changes: 'one strategy per change type: desired object, dry run, commit, undo, probe, restore' },
  { controller: 'informer → work queue → reconciler → stages: the saga carried out' },
  {
    results: 'the results branch: outcomes rendered and written to Git, read back',
    'commit-status': 'commit statuses on the source commit: state, forge requests, the reporter',
  },
  {
    gitops: 'transaction directories in Git: parsed, validated, materialized as Transactions',
    sources:
      'sources in Git: declared, rendered at each commit, compared with their inventory, made into Transactions; drift',
    notify: 'transaction events routed to chat, webhooks and Alertmanager, as the platform team configured',
  },
  { manager: 'the process: leader election, signals, runnables, the ops server, readiness' },
  {
    ui: 'the web view of janus ui: its server, access checks, watches pushed as Server-Sent Events, page models',
    cli: 'the janus commands: flags mapped to options, output',
  },
];

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

const layerOf = new Map(LAYERS.flatMap((layer, n) => Object.keys(layer).map((folder) => [folder, n])));

const describeImport = (i: ModuleImport) =>
  `src/${i.from}:${i.line} → src/${i.to} (${folderOf(i.from)} is layer ${layerOf.get(folderOf(i.from))}, ${folderOf(i.to)} is layer ${layerOf.get(folderOf(i.to))})`;

describe('the layers of src/', () => {
  const imports = importsBelow(SRC).filter((i) => !i.to.startsWith('..'));

  it('declares every folder once', () => {
    const declared = LAYERS.flatMap((layer) => Object.keys(layer));
    expect(declared.length, 'a folder declared twice').toBe(new Set(declared).size);
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => !layerOf.has(folder))).toEqual([]);
  });

  it('has no import of a higher layer', () => {
    const upward = imports.filter(
      (i) => (layerOf.get(folderOf(i.from)) ?? -1) < (layerOf.get(folderOf(i.to)) ?? -1),
    );
    expect(upward.map(describeImport)).toEqual([]);
  });

  it('has no cycle of folders within one layer', () => {
    const edges = new Map<string, Set<string>>();
    for (const { from, to } of imports) {
      const [a, b] = [folderOf(from), folderOf(to)];
      if (a !== b && layerOf.get(a) === layerOf.get(b)) edges.set(a, (edges.get(a) ?? new Set()).add(b));
    }
    expect(folderCycles(edges)).toEqual([]);
  });

  it('sees the imports it checks (the parser finds a known edge, and many)', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports).toContainEqual(expect.objectContaining({ from: 'cli/main.ts', to: 'cli/registry.ts' }));
  });
});

/** Each cycle in `edges`, written `a → b → a`. */
function folderCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (node: string, path: string[]) => {
    if (path.includes(node)) {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    if (done.has(node)) return;
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
    done.add(node);
  };
  for (const node of edges.keys()) visit(node, []);
  return cycles;
}
