/**
 * Every shell command in the ```sh blocks of README.md and docs/*.md, run as a reader would paste
 * it: kubectl against the tests' control plane with an admin kubeconfig as ~/.kube/config, `janus`
 * and `./bin/janus` from this checkout, git in scratch repositories. Fixtures stand in for the
 * placeholders (the namespace `shop`, the transaction `deploy-v2`, `~/.kube/config`,
 * `<the Transaction's uid>`, https://janus.example.com…) and are applied to the command's text.
 *
 * A command is either run by a scenario below or skipped for a reason written next to it
 * (DECISIONS). The first test fails on a command that is neither, so a documented command can no
 * longer drift from the product unnoticed: a new one must be dealt with here.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type Change, FINALIZER, LABEL_TRANSACTION_UID } from '../../../src/api/v1alpha1/index.ts';
import { readAgeKeys } from '../../../src/changes/age-keys.ts';
import { applyManifests } from '../../../src/cli/demo/manifests.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { commitSigner } from '../../../src/git/signing-key-file.ts';
import { parseSshPrivateKey } from '../../../src/git/ssh-private-key.ts';
import { PatchType } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { commitRecords } from '../../../src/results/commit-records.ts';
import { decryptSops } from '../../../src/sops/decrypt.ts';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  configMap,
  data,
  getTxn,
  serviceAccount,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { type DocCommand, docCommands } from '../../support/doc-commands.ts';
import { eventually } from '../../support/eventually.ts';
import { git } from '../../support/git/git-server.ts';
import { reapOnExit } from '../../support/processes/reap.ts';
import { sopsBinaries } from '../../support/servers/sops.ts';

const clients = useClients();
const kube = inject('kube');

// --- What is run, and what is skipped and why ---------------------------------------------------

/** The scenarios below; each runs the documented commands assigned to it. */
type Scenario =
  | 'install-crd'
  | 'controller'
  | 'install'
  | 'opt-in'
  | 'locks'
  | 'ci-wait'
  | 'pull-request'
  | 'status'
  | 'rollback'
  | 'recover'
  | 'finalizer'
  | 'webhook-secret'
  | 'local-run'
  | 'readyz'
  | 'webhook'
  | 'results-branch'
  | 'signed-commits'
  | 'sops-setup'
  | 'signed-results';

/** Matched against a command's one-line text, first match wins; `file` narrows a rule to one document. */
type Decision = { file?: string; command: RegExp } & (
  | { run: Scenario }
  | { skip: string }
  /** Advice known to be wrong: the test fails with this reason. */
  | { wrong: string }
);

const NO_NODES =
  "needs the Deployment's pods to run, and the tests' nodes are simulated by kwok (pods report " +
  'Ready but no process runs, no logs): test/cluster/manifests/install.test.ts runs its container as the kubelet would';

const DECISIONS: Decision[] = [
  {
    command: /^kubectl wait txn\/\S+ .*--for=condition=Ready\b/,
    wrong:
      'waits out its whole timeout on a transaction that ends RolledBack or Failed: wait for ' +
      '--for=condition=Reconciling=False, then check .status.phase',
  },

  // Skipped, each for a reason.
  {
    command: /^source <\(janus completion bash\)$/,
    skip: 'changes the interactive shell; test/local/cli/completion.test.ts loads the script in bash and completes commands, flags and values',
  },
  {
    command: /^janus cancel deploy-v3 -n shop /,
    skip: 'needs a transaction in flight; test/cluster/cli/cancel.test.ts cancels one waiting for a lock and one in its health gate',
  },
  {
    command: /^janus history shop\/deploy-v2 /,
    skip: 'needs a results branch with a day of outcomes; test/cluster/gitops/audit-trail.test.ts runs janus history on one, from the Git server and from a clone',
  },
  {
    command: /^janus poll /,
    skip: 'needs janus run leading against a Git server; test/cluster/gitops/git-side-control.test.ts runs janus poll, suspend and resume against one',
  },
  {
    command: /^kubectl apply -k manifests\/monitoring\/$/,
    skip: "needs the Prometheus Operator's PrometheusRule CRD; test/cluster/manifests/monitoring.test.ts renders it and checks every expression against a scrape",
  },
  {
    command: /^npm ci && \.\/bin\/janus demo$/,
    skip: 'reinstalls node_modules and builds a control plane of its own; test/cluster/cli/demo.test.ts runs janus demo',
  },
  { command: /^npm test$/, skip: 'the whole test suite, this test included' },
  {
    command: /^JANUS_TEST_KUBECONFIG=\S+ npm run test:cluster$/,
    skip: 'the whole integration suite, against a cluster of your own',
  },
  {
    command: /^\.\/bin\/janus demo( --kubeconfig \S+)?( --keep| --ui| --sources)?$/,
    skip: 'long-running, starts its own control plane (or needs a kind cluster); test/cluster/cli/demo.test.ts runs janus demo --kubeconfig, with --ui in a browser, and --sources',
  },
  {
    command: /^janus ui( -n shop --no-open)?$/,
    skip: 'serves until Ctrl-C, for a browser; test/cluster/ui/ui.test.ts starts janus ui and drives Chromium through every page',
  },
  {
    command: /^janus run --repo https:\/\/github\.com\//,
    skip: 'needs a GitHub repository and a token; "local-run" runs janus run on a local repository',
  },
  { command: /^kubectl -n janus-system rollout status deploy\/janus$/, skip: NO_NODES },
  { command: /^kubectl -n janus-system logs deploy\/janus( \|.*)?$/, skip: NO_NODES },
  { command: /^kubectl -n janus-system get pods,lease\/janus-controller$/, skip: NO_NODES },
  {
    command: /^kubectl -n janus-system port-forward deploy\/janus 8080 &$/,
    skip: `${NO_NODES}; "readyz" runs the curl that follows against a janus run process`,
  },
  {
    command: /^git checkout v\d+\.\d+\.\d+ && kubectl apply -k manifests\/$/,
    skip: 'needs a release tag (there is none yet) and checks out the work tree; the apply is the install command, run by "install"',
  },

  {
    file: 'docs/operations.md',
    command:
      /^kubectl -n janus-system (create (secret generic|configmap) janus-notifications |patch deployment janus --patch .*JANUS_NOTIFICATIONS_CONFIG)/,
    skip: `notification setup of the Deployment: ${NO_NODES}; test/cluster/notify/notifications.test.ts runs the controller with such a file, and test/unit/notify/documented-config.test.ts parses this page's file`,
  },
  {
    file: 'docs/operations.md',
    command: /^kubectl (create|label) namespace janus-system( |$)/,
    skip: 'janus-system exists already in the shared test cluster (the kustomize install); test/cluster/manifests/helm.test.ts creates its release namespace with the same Pod Security label and checks the install raises no warning',
  },
  {
    file: 'docs/cli.md',
    command:
      /^(JANUS_FORGE_TOKEN="\$GITLAB_NOTE_TOKEN" )?janus plan \.( --base \S+)? -o markdown --comment-on /,
    skip: 'needs a pull request on a forge and its token; test/cluster/cli/plan-comment.test.ts runs janus plan --comment-on twice against a real Gitea, and test/cluster/ci/examples-ci.test.ts runs the GitHub example as Gitea Actions would; --base (sources) needs a clone with the base commit: test/cluster/sources/plan-sources.test.ts plans one',
  },
  {
    command: /^helm (install|upgrade|uninstall) janus /,
    skip: 'the release janus would own the cluster-scoped names of manifests/ that other tests share (janus-controller, janus-tenant); test/cluster/manifests/helm.test.ts runs helm install, upgrade --reuse-values and uninstall of the release janus-helm, with the helm test/kube-testenv/build.sh builds',
  },

  // Run.
  {
    file: 'README.md',
    command: /^kubectl apply -f manifests\/namespace\.yaml -f manifests\/crd\/$/,
    run: 'install-crd',
  },
  { file: 'README.md', command: /^kubectl apply -k manifests\/(rbac|policy)\/$/, run: 'install-crd' },
  { file: 'README.md', command: /^kubectl create rolebinding janus-tenant -n shop /, run: 'install-crd' },
  { command: /^kubectl create rolebinding janus-tenant -n shop /, run: 'opt-in' },
  { command: /^kubectl label namespace shop tx\.janus\.io\/locks=/, run: 'locks' },
  {
    file: 'docs/security.md',
    command: /^kubectl (patch|delete) locktable janus-locks -n shop\b/,
    run: 'locks',
  },
  { command: /^(\.\/bin\/)?janus controller --kubeconfig ~\/\.kube\/config$/, run: 'controller' },
  { command: /^kubectl apply -k manifests\/$/, run: 'install' },
  { command: /^kubectl -n janus-system create secret generic janus-git /, run: 'install' },
  // The Helm upgrade's CRD step: after apply -k manifests/, the same CRD again.
  { file: 'docs/operations.md', command: /^kubectl apply -f manifests\/crd\/$/, run: 'install' },
  { command: /^kubectl wait txn\/deploy-v2 -n shop /, run: 'ci-wait' },
  { command: /^test "\$\(kubectl get txn\/deploy-v2 -n shop /, run: 'ci-wait' },
  { command: /^janus wait deploy-v2 -n shop /, run: 'ci-wait' },
  { command: /^janus (validate|plan) \. /, run: 'pull-request' },
  { command: /^janus status /, run: 'status' },
  { command: /^janus rollback deploy-v2 -n shop /, run: 'rollback' },
  { command: /^janus recover deploy-v2 -n shop( |$)/, run: 'recover' },
  { command: /^kubectl patch txn deploy-v2 -n shop --type=merge /, run: 'finalizer' },
  { command: /^kubectl delete lease -A -l tx\.janus\.io\/transaction-uid=/, run: 'finalizer' },
  { command: /^openssl rand -hex \d+ \| tr -d '\\n' > webhook-secret$/, run: 'webhook-secret' },
  { command: /^janus run --repo \.\/changes /, run: 'local-run' },
  { command: /^curl -s localhost:8080\/readyz$/, run: 'readyz' },
  {
    file: 'docs/webhooks.md',
    command: /^(body=|sig=\$\(|curl -sS -X POST https:\/\/janus\.example\.com\/)/,
    run: 'webhook',
  },
  { file: 'docs/git.md', command: /^git (fetch|log|show) /, run: 'results-branch' },
  {
    command: /^git config --global (gpg\.format|user\.signingkey|commit\.gpgsign) /,
    run: 'signed-commits',
  },
  { file: 'docs/operations.md', command: /^cat > allowed_signers <</, run: 'signed-commits' },
  {
    file: 'docs/operations.md',
    command: /^git -c gpg\.ssh\.allowedSignersFile=allowed_signers log /,
    run: 'signed-commits',
  },
  {
    file: 'docs/operations.md',
    command: /^kubectl -n janus-system create configmap janus-allowed-signers /,
    run: 'signed-commits',
  },
  {
    file: 'docs/operations.md',
    command:
      /^(age-keygen -o shop\.agekey|kubectl create (secret generic|role|rolebinding) janus-sops-age|cat > \.sops\.yaml|sops encrypt --in-place )/,
    run: 'sops-setup',
  },
  {
    file: 'docs/operations.md',
    command: /^ssh-keygen -t ed25519 -N "" -C janus-results@example\.com -f janus-results$/,
    run: 'signed-results',
  },
  {
    file: 'docs/operations.md',
    command: /^kubectl -n janus-system create secret generic janus-results-signing-key /,
    run: 'signed-results',
  },
  {
    file: 'docs/operations.md',
    command: /^echo "janus-results@example\.com namespaces=/,
    run: 'signed-results',
  },
  { file: 'docs/operations.md', command: /^git fetch origin janus\/results$/, run: 'signed-results' },
  {
    file: 'docs/operations.md',
    command: /^git -c gpg\.ssh\.allowedSignersFile=janus-results\.allowed_signers log /,
    run: 'signed-results',
  },
  { command: /^janus history --verify /, run: 'signed-results' },
];

const DOCS = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

const COMMANDS = docCommands(
  DOCS.map((file) => ({ file, markdown: readFileSync(join(REPO_ROOT, file), 'utf8') })),
);

const where = (c: DocCommand) => `${c.file}:${c.line}: ${c.text}`;

/** Every documented command a scenario has run: the last test checks none that should run was left out. */
const ranSoFar = new Set<DocCommand>();

function decisionFor(c: DocCommand): Decision | undefined {
  return DECISIONS.find((d) => (d.file === undefined || d.file === c.file) && d.command.test(c.text));
}

/** The documented commands a scenario runs, in document order (optionally of one file only). */
function commandsFor(scenario: Scenario, file?: string): DocCommand[] {
  const found = COMMANDS.filter((c) => {
    const d = decisionFor(c);
    return d && 'run' in d && d.run === scenario && (file === undefined || c.file === file);
  });
  if (found.length === 0) throw new Error(`no documented command is run by scenario ${scenario}`);
  return found;
}

// --- Running commands as a reader would -----------------------------------------------------------

let scratch = '';
/** HOME of every command: ~/.kube/config is the admin kubeconfig, ~/.cache/janus is private. */
let home = '';
/** On PATH first: `janus` (this checkout's bin/janus) and the control plane's kubectl. */
let tools = '';
/** A checkout as the README assumes one: manifests/ (a copy), bin/ and a token file. */
let checkout = '';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-docs-'));
  home = join(scratch, 'home');
  tools = join(scratch, 'tools');
  checkout = join(scratch, 'checkout');
  await mkdir(join(home, '.kube'), { recursive: true });
  await writeFile(join(home, '.kube/config'), await readFile(kube.kubeconfigs.admin));
  await mkdir(tools);
  await symlink(join(REPO_ROOT, 'bin/janus'), join(tools, 'janus'));
  if (kube.binDir) await symlink(join(kube.binDir, 'kubectl'), join(tools, 'kubectl'));
  await mkdir(checkout);
  await cp(join(REPO_ROOT, 'manifests'), join(checkout, 'manifests'), { recursive: true });
  await symlink(join(REPO_ROOT, 'bin'), join(checkout, 'bin'));
  await writeFile(join(checkout, 'git-token'), 'a-token-for-the-docs-test\n');
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** Fixtures for placeholders and example names, applied in order to each command's text. */
  replace?: ReadonlyArray<readonly [RegExp | string, string]>;
}

interface Ran {
  command: DocCommand;
  /** What actually ran, fixtures substituted. */
  source: string;
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

function substituted(c: DocCommand, opts: RunOptions): string {
  let source = c.source;
  for (const [from, to] of opts.replace ?? []) {
    // A string is replaced literally; a RegExp's replacement may use $&.
    source = typeof from === 'string' ? source.replaceAll(from, () => to) : source.replace(from, to);
  }
  return source;
}

/** The environment of a reader's shell: no JANUS_* or KUBECONFIG of the test's own. */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('JANUS_') && key !== 'KUBECONFIG'),
  );
  return {
    ...env,
    HOME: home,
    PATH: [tools, dirname(process.execPath), process.env.PATH ?? ''].join(':'),
    ...extra,
  };
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * Runs the commands one after the other in one bash, as pasted into a terminal: shell variables
 * carry over, a failing command does not stop the next. Returns each one's exit status and output.
 */
async function runCommands(commands: DocCommand[], opts: RunOptions): Promise<Ran[]> {
  const dir = await mkdtemp(join(scratch, 'run-'));
  const sources = commands.map((c) => substituted(c, opts));
  for (const c of commands) ranSoFar.add(c);
  const script = [
    `cd ${quote(opts.cwd)} || exit 99`,
    ...sources.map((source, i) =>
      [
        '__start=$EPOCHREALTIME',
        '{',
        source,
        `} >${quote(join(dir, `${i}.out`))} 2>${quote(join(dir, `${i}.err`))} </dev/null`,
        `echo "$? $__start $EPOCHREALTIME" >${quote(join(dir, `${i}.rc`))}`,
      ].join('\n'),
    ),
  ].join('\n');
  await writeFile(join(dir, 'script.sh'), script);
  await new Promise<void>((resolve, reject) => {
    reapOnExit(
      execFile('bash', [join(dir, 'script.sh')], { env: shellEnv(opts.env), timeout: 170_000 }, (err) =>
        err?.killed ? reject(new Error(`timed out running:\n${sources.join('\n')}`)) : resolve(),
      ),
    );
  });
  const ran: Ran[] = [];
  for (const [i, command] of commands.entries()) {
    const rc = await readFile(join(dir, `${i}.rc`), 'utf8').catch(() => '');
    const [code, start, end] = rc.trim().split(' ');
    ran.push({
      command,
      source: sources[i] ?? '',
      code: code === undefined || code === '' ? -1 : Number(code),
      stdout: await readFile(join(dir, `${i}.out`), 'utf8').catch(() => ''),
      stderr: await readFile(join(dir, `${i}.err`), 'utf8').catch(() => ''),
      seconds: Number(end) - Number(start),
    });
  }
  return ran;
}

const described = (r: Ran) =>
  `${where(r.command)}\nran: ${r.source}\nexit ${r.code} after ${r.seconds.toFixed(1)} s\n` +
  `stdout: ${r.stdout.slice(0, 4000)}\nstderr: ${r.stderr.slice(0, 4000)}`;

/** Every command exited 0, or with the status an override names for it. */
function expectExits(ran: Ran[], overrides: ReadonlyArray<readonly [RegExp, number]> = []): void {
  for (const r of ran) {
    const want = overrides.find(([re]) => re.test(r.command.text))?.[1] ?? 0;
    expect(r.code, described(r)).toBe(want);
  }
}

function ranOne(ran: Ran[], re: RegExp): Ran {
  const found = ran.find((r) => re.test(r.command.text));
  if (!found) throw new Error(`none of these ran: ${re}\n${ran.map((r) => where(r.command)).join('\n')}`);
  return found;
}

/** A long-running documented command (janus controller, janus run, status --watch) as its own process. */
interface Running {
  readonly child: ChildProcess;
  output(): string;
  /** Waits until the output matches, failing fast if the process ends first. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Sends the signal and resolves with the exit status (or the signal's name). */
  stop(signal: NodeJS.Signals): Promise<number | string>;
}

/**
 * The `janus controller` command a doc gives, as the controller's ServiceAccount, limited to one
 * namespace of the shared cluster, with a leader Lease of its own and any free port.
 */
function startDocumentedController(doc: string, ns: string) {
  const [run] = commandsFor('controller', doc);
  if (!run) throw new Error(`${doc} runs no controller`);
  return start(run, {
    cwd: checkout,
    replace: [['~/.kube/config', kube.kubeconfigs.controller]],
    env: {
      JANUS_WATCH_NAMESPACE: ns,
      JANUS_LEADER_ELECTION_ID: `docs-${ns}`,
      JANUS_METRICS_BIND_ADDRESS: '127.0.0.1:0',
    },
  });
}

function start(command: DocCommand, opts: RunOptions): Running {
  const source = substituted(command, opts);
  ranSoFar.add(command);
  const child = reapOnExit(
    spawn('bash', ['-c', `exec ${source}`], {
      cwd: opts.cwd,
      env: shellEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    child,
    output: () => output,
    waitFor: (re, timeoutMs = 60_000) =>
      eventually(
        () => {
          const m = re.exec(output);
          if (m) return m;
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`${where(command)} exited (${child.exitCode ?? child.signalCode}):\n${output}`);
          throw new Error(`${where(command)}: no ${re} in its output yet:\n${output.slice(-3000)}`);
        },
        { timeoutMs, intervalMs: 100 },
      ),
    stop: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The operations server's URL, from the JSON log line of janus run or janus controller. */
async function opsUrl(running: Running): Promise<string> {
  const m = await running.waitFor(/"url":"(http:[^"]+)","msg":"operations server listening"/);
  return m[1] ?? '';
}

// --- Fixtures ---------------------------------------------------------------------------------

const inNamespace = (yaml: string, ns: string) => yaml.replace(/^(\s*namespace:\s*)shop\s*$/gm, `$1${ns}`);

/** examples/setup in `ns` instead of shop: the ServiceAccount deployer with its Role, and the workloads. */
async function exampleShop(ns: string): Promise<void> {
  const objects: KubeObject[] = [];
  for (const file of ['10-deployer.yaml', '20-workloads.yaml']) {
    const yaml = inNamespace(await readFile(join(REPO_ROOT, 'examples/setup', file), 'utf8'), ns);
    for (const doc of parseAllDocuments(yaml)) objects.push(doc.toJS() as KubeObject);
  }
  await applyManifests(clients.admin, objects);
}

/** examples/transactions/deploy-v2, in `ns`, written under `<root>/transactions/deploy-v2`. */
async function exampleDirectory(root: string, ns: string): Promise<void> {
  const from = join(REPO_ROOT, 'examples/transactions/deploy-v2');
  const to = join(root, 'transactions/deploy-v2');
  await mkdir(to, { recursive: true });
  for (const file of readdirSync(from)) {
    await writeFile(join(to, file), inNamespace(await readFile(join(from, file), 'utf8'), ns));
  }
}

/** A namespace that has not opted in to Janus. */
async function plainNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

const deleteNamespace = (name: string) =>
  clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => {});

const patchBoth = (name: string): Change[] =>
  ['a', 'b'].map((suffix) => ({
    target: { apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-${suffix}` },
    type: 'Patch',
    content: { data: { value: 'after' } },
  }));

/**
 * A Transaction for the documented controller, which runs as the docs start it: the default
 * installation (no --instance), so its Transactions carry no instance label (instance.ts).
 */
const documentedTransaction = (ns: string, name: string, changes: Change[]) =>
  transaction(ns, name, changes, { instance: null });

/** ConfigMaps `<name>-a` and `<name>-b`, and a Transaction `name` patching both (not waited for). */
async function patchTransaction(ns: string, name: string): Promise<void> {
  for (const suffix of ['a', 'b'])
    await clients.admin.create(configMap(ns, `${name}-${suffix}`, { value: 'before' }));
  await clients.admin.create(documentedTransaction(ns, name, patchBoth(name)));
}

/** Creates a ConfigMap that exists already: refused at prepare, so the transaction ends Failed. */
async function failingTransaction(ns: string, name: string): Promise<void> {
  await clients.admin.create(configMap(ns, `${name}-taken`, { value: 'mine' }));
  await clients.admin.create(
    documentedTransaction(ns, name, [
      {
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-taken` },
        type: 'Create',
        content: { data: { value: 'theirs' } },
      },
    ]),
  );
}

// --- The tests ----------------------------------------------------------------------------------

describe('documented commands', () => {
  it('are each run by a scenario here, or skipped for a stated reason', () => {
    expect(COMMANDS.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const c of COMMANDS) {
      const d = decisionFor(c);
      if (!d)
        problems.push(
          `${where(c)}\n  is neither run nor skipped: run it in a scenario of ` +
            'test/cluster/docs/commands.test.ts, or add it to DECISIONS with the reason to skip it',
        );
      else if ('wrong' in d) problems.push(`${where(c)}\n  is wrong: ${d.wrong}`);
    }
    for (const d of DECISIONS) {
      if (!('wrong' in d) && !COMMANDS.some((c) => decisionFor(c) === d))
        problems.push(`DECISIONS entry ${d.command} matches no documented command: remove it`);
    }
    expect(problems.join('\n')).toBe('');
  });
});

describe('installing from a checkout', () => {
  it('README "Install the CRD and run the controller": applies, opts a namespace in, and the controller commits there', async () => {
    const ns = await plainNamespace('docs-crd');
    let controller: Running | undefined;
    try {
      const ran = await runCommands(commandsFor('install-crd'), {
        cwd: checkout,
        replace: [[/\bshop\b/g, ns]],
      });
      expectExits(ran);
      expect(ran.map((r) => r.command.text)).toEqual([
        expect.stringMatching(/^kubectl apply -f manifests\/namespace\.yaml/),
        'kubectl apply -k manifests/rbac/',
        'kubectl apply -k manifests/policy/',
        expect.stringMatching(/^kubectl create rolebinding janus-tenant/),
      ]);
      // As the controller's ServiceAccount would be in the cluster: only the RBAC just applied.
      controller = startDocumentedController('README.md', ns);
      await serviceAccount(clients.admin, ns, 'deployer', [ALL_ON_CONFIGMAPS]);
      await patchTransaction(ns, 'first');
      await waitForPhase(clients.admin, ns, 'first', 'Committed');
      expect(await data(clients.admin, ns, 'first-b')).toEqual({ value: 'after' });
      expect(await controller.stop('SIGTERM'), controller.output()).toBe(0);
    } finally {
      await controller?.stop('SIGKILL');
      await deleteNamespace(ns);
    }
  });

  it('README and operations.md "Install in a cluster": kubectl apply -k manifests/ and the Secret', async () => {
    const ran = await runCommands(commandsFor('install'), {
      cwd: checkout,
      // Other tests share janus-system: the Secret is checked by the API server, not stored.
      replace: [[/--from-file=token=\.\/git-token/g, '$& --dry-run=server -o yaml']],
    });
    expectExits(ran);
    const secrets = ran.filter((r) => r.command.text.includes('create secret'));
    expect(secrets.length).toBeGreaterThan(0);
    for (const r of secrets) {
      const secret = parseAllDocuments(r.stdout)[0]?.toJS() as { data: Record<string, string> };
      expect(Buffer.from(secret.data.repository ?? '', 'base64').toString()).toMatch(/^https:\/\//);
      expect(Buffer.from(secret.data.token ?? '', 'base64').toString()).toBe('a-token-for-the-docs-test\n');
    }
    expect(
      await clients.admin.find({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'janus',
        namespace: 'janus-system',
      }),
    ).toBeDefined();
  });

  it('"kubectl create rolebinding janus-tenant" opts a namespace in: the controller may then keep locks there', async () => {
    for (const command of commandsFor('opt-in')) {
      const ns = await plainNamespace('docs-opt-in');
      try {
        // A lock nobody holds: Forbidden before the binding, not found after it.
        const lock = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          name: 'no-such-lock',
          namespace: ns,
        };
        await expect(clients.controller.find(lock)).rejects.toThrow(/forbidden/i);
        expectExits(await runCommands([command], { cwd: checkout, replace: [[/\bshop\b/g, ns]] }));
        await eventually(async () => expect(await clients.controller.find(lock)).toBeUndefined());
      } finally {
        await deleteNamespace(ns);
      }
    }
  });
});

describe('locks that block, by hand', () => {
  it('"kubectl label namespace" opts a namespace in; "kubectl patch|delete locktable" open what a gone controller held', async () => {
    const ns = await plainNamespace('docs-locks');
    try {
      const holder = {
        transaction: 'release-7',
        namespace: ns,
        uid: 'uid-gone',
        user: 'system:serviceaccount:x:y',
        phase: 'Verifying',
      };
      const table = {
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'LockTable',
        name: 'janus-locks',
        namespace: ns,
      };
      await clients.admin.apply(
        {
          apiVersion: table.apiVersion,
          kind: table.kind,
          metadata: { name: table.name, namespace: ns },
          spec: { locks: { 'deployments.apps/web': holder, 'configmaps/app-config': holder } },
        } as KubeObject,
        { fieldManager: 'janus-lock:uid-gone' },
      );
      const labels = commandsFor('locks').filter((c) => c.text.startsWith('kubectl label'));
      expect(labels.length).toBeGreaterThan(0);
      expectExits(await runCommands(labels, { cwd: checkout, replace: [[/\bshop\b/g, ns]] }));
      const namespace = await clients.admin.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      expect(namespace.metadata.labels?.['tx.janus.io/locks']).toBe('Deny');

      const [patch, remove] = ['kubectl patch', 'kubectl delete'].map((start) =>
        commandsFor('locks', 'docs/security.md').filter((c) => c.text.startsWith(start)),
      );
      expectExits(await runCommands(patch ?? [], { cwd: checkout, replace: [[/\bshop\b/g, ns]] }));
      const left = (await clients.admin.get(table)) as KubeObject & {
        spec?: { locks?: Record<string, unknown> };
      };
      expect(Object.keys(left.spec?.locks ?? {})).toEqual(['configmaps/app-config']);
      expectExits(await runCommands(remove ?? [], { cwd: checkout, replace: [[/\bshop\b/g, ns]] }));
      expect(await clients.admin.find(table)).toBeUndefined();
    } finally {
      await deleteNamespace(ns);
    }
  });
});

describe('a namespace with the example shop and `janus controller` running', () => {
  let ns = '';
  let controller: Running | undefined;
  const inShop = (name = 'deploy-v2'): RunOptions => ({
    cwd: checkout,
    replace: [
      [/\bshop\b/g, ns],
      [/\bdeploy-v2\b/g, name],
    ],
  });

  beforeAll(async () => {
    ns = await testNamespace(clients.admin, 'docs-shop');
    await exampleShop(ns);
    controller = startDocumentedController('docs/cli.md', ns);
    const url = await opsUrl(controller);
    await eventually(async () => expect((await fetch(`${url}/readyz`)).status).toBe(200));
  });

  afterAll(async () => {
    const code = await controller?.stop('SIGTERM');
    await deleteNamespace(ns);
    if (code !== 0) throw new Error(`janus controller exited ${code}:\n${controller?.output()}`);
  });

  it('cli.md validate and plan, on a pull request holding examples/transactions/deploy-v2', async () => {
    const pr = await mkdtemp(join(scratch, 'pull-request-'));
    await exampleDirectory(pr, ns);
    // As docs/cli.md says its plan example ran: the repository's policy in the environment.
    const ran = await runCommands(commandsFor('pull-request'), {
      cwd: pr,
      replace: [[/\bshop\b/g, ns]],
      env: { JANUS_ALLOWED_NAMESPACES: ns, JANUS_ALLOWED_SERVICE_ACCOUNTS: `${ns}/deployer` },
    });
    // plan: "something would change" is 1; behind a pipe, the status is jq's.
    expectExits(ran, [[/^janus plan \. -o diff > /, 1]]);
    expect(await readFile(join(pr, 'plan.diff'), 'utf8')).toContain(
      `+++ planned v1 ConfigMap ${ns}/app-config`,
    );
    const jq = ranOne(ran, /^janus plan \. -o json \| jq /);
    expect(jq.stdout).toContain('"deploy-v2"');
  });

  it("README's CI wait returns as soon as the transaction is Committed, with status 0", async () => {
    await patchTransaction(ns, 'wait-ok');
    const ran = await runCommands(commandsFor('ci-wait'), inShop('wait-ok'));
    expectExits(ran);
    expect(ran[0]?.seconds, described(ran[0] as Ran)).toBeLessThan(60);
  });

  it("README's CI wait returns as soon as the transaction is RolledBack, with status 1", async () => {
    const removePolicy = await failAtCommit(clients.admin, ns, 'wait-refused');
    try {
      // The first change commits, the second is refused at commit: the first is undone.
      await clients.admin.create(configMap(ns, 'wait-rolled-back-a', { value: 'before' }));
      await clients.admin.create(
        documentedTransaction(ns, 'wait-rolled-back', [
          patchBoth('wait-rolled-back')[0] as Change,
          {
            target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'wait-refused' },
            type: 'Create',
            content: { data: { value: 'never' } },
          },
        ]),
      );
      const ran = await runCommands(commandsFor('ci-wait'), inShop('wait-rolled-back'));
      expectExits(ran, [
        [/^test /, 1],
        [/^janus wait /, 1],
      ]);
      expect(ran[0]?.seconds, described(ran[0] as Ran)).toBeLessThan(60);
      expect((await getTxn(clients.admin, ns, 'wait-rolled-back')).status?.phase).toBe('RolledBack');
      expect(await data(clients.admin, ns, 'wait-rolled-back-a')).toEqual({ value: 'before' });
      // The advice this replaced: waiting for Ready sits out its whole timeout, then fails.
      const started = Date.now();
      const ready = spawnSync(
        'kubectl',
        ['wait', 'txn/wait-rolled-back', '-n', ns, '--for=condition=Ready', '--timeout=3s'],
        { env: shellEnv(), encoding: 'utf8' },
      );
      expect(ready.status, ready.stderr).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    } finally {
      await removePolicy();
    }
  });

  it("README's CI wait returns as soon as the transaction is Failed, with status 1", async () => {
    await failingTransaction(ns, 'wait-failed');
    const ran = await runCommands(commandsFor('ci-wait'), inShop('wait-failed'));
    expectExits(ran, [
      [/^test /, 1],
      [/^janus wait /, 1],
    ]);
    expect(ran[0]?.seconds, described(ran[0] as Ran)).toBeLessThan(60);
    expect((await getTxn(clients.admin, ns, 'wait-failed')).status?.phase).toBe('Failed');
  });

  it('cli.md status: --watch follows a transaction until Ctrl-C; -A -o json | jq finds the Failed ones', async () => {
    await patchTransaction(ns, 'watched');
    await failingTransaction(ns, 'stuck');
    await waitForPhase(clients.admin, ns, 'watched', 'Committed');
    await waitForPhase(clients.admin, ns, 'stuck', 'Failed');
    const commands = commandsFor('status');
    const watching = commands.filter((c) => /(^| )(--watch|-w)( |$)/.test(c.text));
    expect(watching.length).toBeGreaterThan(0);
    for (const command of watching) {
      const watch = start(command, inShop('watched'));
      try {
        await watch.waitFor(/Committed/);
        expect(await watch.stop('SIGINT'), watch.output()).toBe(0);
      } finally {
        await watch.stop('SIGKILL');
      }
    }
    const ran = await runCommands(
      commands.filter((c) => !watching.includes(c)),
      inShop('watched'),
    );
    expectExits(ran);
    const failed = ranOne(ran, /-A -o json \| jq /).stdout.split('\n');
    expect(failed).toContain('stuck');
    expect(failed).not.toContain('watched');
  });

  it('cli.md rollback --wait: exits 0 once the transaction is RolledBack', async () => {
    await patchTransaction(ns, 'undo-me');
    await waitForPhase(clients.admin, ns, 'undo-me', 'Committed');
    expectExits(await runCommands(commandsFor('rollback'), inShop('undo-me')));
    expect((await getTxn(clients.admin, ns, 'undo-me')).status?.phase).toBe('RolledBack');
    expect(await data(clients.admin, ns, 'undo-me-b')).toEqual({ value: 'before' });
  });

  it('operations.md recover: shows the conflict, then --apply 1 restores it and the rollback finishes', async () => {
    await patchTransaction(ns, 'conflicted');
    await waitForPhase(clients.admin, ns, 'conflicted', 'Committed');
    const b = { apiVersion: 'v1', kind: 'ConfigMap', name: 'conflicted-b', namespace: ns };
    await clients.admin.patch(b, { data: { value: 'someone else' } }, PatchType.merge);
    await annotate(clients.admin, ns, 'conflicted', { 'tx.janus.io/request-rollback': 'docs test' });
    const failed = await waitForPhase(clients.admin, ns, 'conflicted', 'Failed');
    expect(failed.status?.items?.map((i) => i.conflict ?? false)).toEqual([false, true]);

    const ran = await runCommands(commandsFor('recover'), inShop('conflicted'));
    expectExits(ran);
    expect(ranOne(ran, /^janus recover \S+ -n \S+$/).stderr).toMatch(/\[1\].*CONFLICT/);
    await waitForPhase(clients.admin, ns, 'conflicted', 'RolledBack');
    expect(await data(clients.admin, ns, 'conflicted-b')).toEqual({ value: 'before' });
  });
});

it('operations.md last resort: the finalizer patch and the Lease delete free a Transaction no controller will finish', async () => {
  const ns = await testNamespace(clients.admin, 'docs-finalizer');
  try {
    const txn = documentedTransaction(ns, 'orphaned', patchBoth('orphaned'));
    const created = await clients.admin.create({
      ...txn,
      metadata: { ...txn.metadata, finalizers: [FINALIZER] },
    } as unknown as KubeObject);
    const uid = created.metadata.uid ?? '';
    // What a controller that died holding the locks leaves behind.
    await clients.admin.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'orphaned-lock',
        namespace: ns,
        labels: { 'app.kubernetes.io/managed-by': 'janus', [LABEL_TRANSACTION_UID]: uid },
      },
      spec: { holderIdentity: `${ns}/orphaned/${uid}`, leaseDurationSeconds: 300 },
    });
    await clients.admin.delete(txnRef(ns, 'orphaned'));
    expect((await clients.admin.get(txnRef(ns, 'orphaned'))).metadata.deletionTimestamp).toBeDefined();

    const ran = await runCommands(commandsFor('finalizer'), {
      cwd: checkout,
      replace: [
        [/\bshop\b/g, ns],
        [/\bdeploy-v2\b/g, 'orphaned'],
        ["<the Transaction's uid>", uid],
      ],
    });
    expectExits(ran);
    await eventually(async () => expect(await clients.admin.find(txnRef(ns, 'orphaned'))).toBeUndefined());
    expect(
      await clients.admin.find({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        name: 'orphaned-lock',
        namespace: ns,
      }),
    ).toBeUndefined();
  } finally {
    await deleteNamespace(ns);
  }
});

describe('`janus run` on a local repository, its webhook, its probes and its results branch', () => {
  let ns = '';
  let work = '';
  let run: Running | undefined;
  let url = '';

  beforeAll(async () => {
    ns = await testNamespace(clients.admin, 'docs-run');
    await exampleShop(ns);
    work = await mkdtemp(join(scratch, 'run-work-'));
    const changes = join(work, 'changes');
    await mkdir(changes);
    await git(changes, 'init', '--quiet', '--initial-branch=main');
    await exampleDirectory(changes, ns);
    await git(changes, 'add', '--all');
    await git(changes, 'commit', '--quiet', '-m', 'deploy-v2');
    // webhooks.md first: the secret the endpoint needs.
    expectExits(await runCommands(commandsFor('webhook-secret'), { cwd: work }));
    const [command, ...others] = commandsFor('local-run');
    expect(others).toEqual([]);
    if (!command) throw new Error('unreachable');
    run = start(command, {
      cwd: work,
      env: {
        // Shared cluster: one namespace, which the repository may use; any free port; the webhook on.
        JANUS_WATCH_NAMESPACE: ns,
        JANUS_DEFAULT_NAMESPACE: ns,
        JANUS_METRICS_BIND_ADDRESS: '127.0.0.1:0',
        JANUS_POLL_INTERVAL: '2s',
        JANUS_WEBHOOK_SECRET_FILE: join(work, 'webhook-secret'),
      },
    });
    url = await opsUrl(run);
  });

  afterAll(async () => {
    await run?.stop('SIGKILL');
    await deleteNamespace(ns);
  });

  it('cli.md: applies the directory and records it on the results branch of the repository itself', async () => {
    await waitForPhase(clients.admin, ns, 'deploy-v2', 'Committed');
    await eventually(
      async () =>
        expect(await git(join(work, 'changes'), 'log', '--format=%s', 'janus/results')).toContain(
          `${ns}/deploy-v2: Committed`,
        ),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  it('operations.md: /readyz lists its checks', async () => {
    const ran = await runCommands(commandsFor('readyz'), {
      cwd: work,
      replace: [['localhost:8080', new URL(url).host]],
    });
    expectExits(ran);
    expect(ran[0]?.stdout).toMatch(/\[\+\]informers-synced ok/);
  });

  it('webhooks.md: the generic webhook, signed as shown, triggers a poll', async () => {
    const ran = await runCommands(commandsFor('webhook'), {
      cwd: work,
      replace: [['https://janus.example.com', url]],
    });
    expectExits(ran);
    expect(ranOne(ran, /^curl /).stdout).toBe('{"status":"triggered"}');
  });

  it('git.md: the results branch, read from a clone of the watched repository', async () => {
    const clone = join(work, 'clone');
    await git(work, 'clone', '--quiet', join(work, 'changes'), clone);
    const ran = await runCommands(commandsFor('results-branch'), {
      cwd: clone,
      replace: [[/\bshop\b/g, ns]],
    });
    expectExits(ran);
    const main = await git(join(work, 'changes'), 'rev-parse', 'main');
    expect(ranOne(ran, /^git log --format='%h %s' /).stdout).toContain(`${ns}/deploy-v2: Committed`);
    expect(ranOne(ran, /^git log --format='%\(trailers:key=Janus-Source/).stdout.trim()).toBe(main);
    expect(ranOne(ran, /^git log --grep=/).stdout).toContain('Janus-Phase: Committed');
    expect(ranOne(ran, /^git show /).stdout).toMatch(/phase: Committed/);
  });

  it('cli.md: ends with status 0 on Ctrl-C', async () => {
    expect(await run?.stop('SIGINT'), run?.output()).toBe(0);
  });
});

it('README and operations.md "Signed commits": a signer sets git up, the allowed signers verify their commit by hand, the ConfigMap', async () => {
  const dir = await mkdtemp(join(scratch, 'signed-'));
  // Its own global configuration, so the other scenarios' git commands do not start signing.
  const env = { GIT_CONFIG_GLOBAL: join(dir, 'gitconfig') };
  const key = join(home, '.ssh', 'id_ed25519');
  await mkdir(dirname(key), { recursive: true });
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice', '-f', key]);
  const bob = join(dir, 'bob');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bob', '-f', bob]);
  const setup = commandsFor('signed-commits').filter((c) => c.text.startsWith('git config --global'));
  expectExits(await runCommands(setup, { cwd: dir, env }));

  // A commit made with that configuration, as the reader would make it: signed.
  const repo = join(dir, 'repo');
  const gitAsReader = (...args: string[]) =>
    spawnSync('git', args, {
      cwd: repo,
      encoding: 'utf8',
      env: shellEnv({
        ...env,
        GIT_AUTHOR_NAME: 'Alice',
        GIT_AUTHOR_EMAIL: 'alice@example.com',
        GIT_COMMITTER_NAME: 'Alice',
        GIT_COMMITTER_EMAIL: 'alice@example.com',
      }),
    });
  await mkdir(repo);
  gitAsReader('init', '--quiet', '--initial-branch=main');
  expect(gitAsReader('commit', '--quiet', '--allow-empty', '-m', 'signed').status).toBe(0);

  const configMap = `janus-allowed-signers-${randomBytes(3).toString('hex')}`;
  const publicKey = async (path: string) =>
    (await readFile(`${path}.pub`, 'utf8')).split(' ').slice(0, 2).join(' ');
  const rest = commandsFor('signed-commits').filter((c) => !setup.includes(c));
  const ran = await runCommands(rest, {
    cwd: repo,
    env,
    replace: [
      ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIalicesPublicKey', await publicKey(key)],
      ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIbobsPublicKey', await publicKey(bob)],
      ['janus-allowed-signers', configMap],
    ],
  });
  try {
    expectExits(ran);
    expect(ranOne(ran, /^git -c gpg\.ssh\.allowedSignersFile/).stdout).toContain(
      'Good "git" signature for alice@example.com with ED25519 key',
    );
    const created = (await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'janus-system',
      name: configMap,
    })) as KubeObject & { data?: Record<string, string> };
    expect(created.data?.allowed_signers).toBe(await readFile(join(repo, 'allowed_signers'), 'utf8'));
  } finally {
    await clients.admin
      .delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'janus-system', name: configMap })
      .catch(() => {});
  }
});

describe('SOPS-encrypted Secrets, set up as docs/operations.md says', () => {
  it('"Encrypted Secrets": the key, its Secret and Role, a .sops.yaml and sops encrypt make a file Janus decrypts as the ServiceAccount', async () => {
    const ns = await plainNamespace('docs-sops');
    const repo = await mkdtemp(join(scratch, 'sops-'));
    try {
      await serviceAccount(clients.admin, ns, 'deployer', []);
      const file = 'transactions/rotate-web/10-web-credentials.update.sops.yaml';
      await mkdir(join(repo, dirname(file)), { recursive: true });
      const plain = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-credentials\nstringData:\n  password: from-the-docs\n`;
      await writeFile(join(repo, file), plain);
      const env = {
        PATH: [sopsBinaries(), tools, dirname(process.execPath), process.env.PATH ?? ''].join(':'),
      };
      const [keygen, ...rest] = commandsFor('sops-setup');
      if (!keygen) throw new Error('no age-keygen command');
      expectExits(await runCommands([keygen], { cwd: repo, env, replace: [[/\bshop\b/g, ns]] }));
      const keyFile = await readFile(join(repo, `${ns}.agekey`), 'utf8');
      const recipient = /^# public key: (age1\S+)$/m.exec(keyFile)?.[1] ?? '';
      const ran = await runCommands(rest, {
        cwd: repo,
        env,
        replace: [
          [/\bshop\b/g, ns],
          ['age1…', recipient],
        ],
      });
      expectExits(ran);
      expect(ran.map((r) => r.command.text.split(' ').slice(0, 3).join(' '))).toEqual([
        'kubectl create secret',
        'kubectl create role',
        'kubectl create rolebinding',
        'cat > .sops.yaml',
        'sops encrypt --in-place',
      ]);
      const encrypted = await readFile(join(repo, file), 'utf8');
      expect(encrypted).not.toContain('from-the-docs');
      expect(encrypted).toContain('name: web-credentials');
      // What the controller does: the keys read as the ServiceAccount the Role lets read them.
      const asDeployer = clients.admin.as(`system:serviceaccount:${ns}:deployer`);
      const keys = await readAgeKeys(asDeployer, ns);
      expect(await decryptSops(file, encrypted, keys)).toMatchObject({
        stringData: { password: 'from-the-docs' },
      });
    } finally {
      await deleteNamespace(ns);
    }
  });
});

it('operations.md "Signed results": the key, its Secret and the published line; an auditor checks a branch signed with it', async () => {
  const dir = await mkdtemp(join(scratch, 'signed-results-'));
  const secret = `janus-results-signing-key-${randomBytes(3).toString('hex')}`;
  const setup = commandsFor('signed-results').filter((c) => /^(ssh-keygen|kubectl|echo) /.test(c.text));
  const made = await runCommands(setup, { cwd: dir, replace: [['janus-results-signing-key', secret]] });
  try {
    expectExits(made);
    const stored = (await clients.admin.get({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: 'janus-system',
      name: secret,
    })) as KubeObject & { data?: Record<string, string> };
    const privateKey = await readFile(join(dir, 'janus-results'), 'utf8');
    expect(Buffer.from(stored.data?.['ssh-privatekey'] ?? '', 'base64').toString()).toBe(privateKey);

    // A results branch as janus run writes it with that key, on an origin the auditor clones.
    const origin = join(dir, 'origin.git');
    await git(dir, 'init', '--quiet', '--bare', origin);
    const who = { name: 'Janus', email: 'janus@tx.janus.io', timestamp: 1_795_000_000, timezoneOffset: 0 };
    const records = ['Pending', 'Committed'].map((phase, i) => ({
      files: { 'results/shop/deploy-v2.yaml': `phase: ${phase}\n` },
      message: `shop/deploy-v2: ${phase}\n\nJanus-Transaction: shop/deploy-v2\nJanus-Phase: ${phase}\n`,
      id: `r-${i}`,
    }));
    const sign = commitSigner(parseSshPrivateKey(privateKey));
    const { tip } = await commitRecords(new ObjectStore(origin), undefined, records, who, new Set(), sign);
    await git(origin, 'update-ref', 'refs/heads/janus/results', tip ?? '');
    const repo = join(dir, 'repo');
    await git(dir, 'clone', '--quiet', origin, repo);
    await cp(join(dir, 'janus-results.allowed_signers'), join(repo, 'janus-results.allowed_signers'));

    const audit = commandsFor('signed-results').filter((c) => !setup.includes(c));
    const ran = await runCommands(audit, { cwd: repo });
    // grep -v finds nothing to print: every commit is a good signature (its status 1).
    expectExits(ran, [[/\| grep -v '\^G '$/, 1]]);
    expect(ranOne(ran, /--show-signature/).stdout).toContain(
      'Good "git" signature for janus-results@example.com with ED25519 key',
    );
    expect(ranOne(ran, /\| grep -v/).stdout).toBe('');
    const history = ranOne(ran, /^janus history --verify /).stderr;
    expect(history).toMatch(/SIGNATURE\n/);
    expect(history.trim().split('\n').slice(1)).toEqual([
      expect.stringMatching(/shop\/deploy-v2\s+Pending\s.*\sverified$/),
      expect.stringMatching(/shop\/deploy-v2\s+Committed\s.*\sverified$/),
      // The walk of the whole branch (every commit, records or not) follows the table.
      expect.stringMatching(/^Branch: \d+ commits? checked, every one verified\.$/),
    ]);
  } finally {
    await clients.admin
      .delete({ apiVersion: 'v1', kind: 'Secret', namespace: 'janus-system', name: secret })
      .catch(() => {});
  }
});

it('ran every documented command that is not skipped', () => {
  const left = COMMANDS.filter((c) => {
    const d = decisionFor(c);
    return d && 'run' in d && !ranSoFar.has(c);
  });
  expect(left.map(where).join('\n'), 'assigned to a scenario that did not run them').toBe('');
});
