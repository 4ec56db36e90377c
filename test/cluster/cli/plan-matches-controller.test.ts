/**
 * `janus plan` and the controller judge the same transaction directories the same way: a change
 * the plan shows as going through is not refused at prepare, and a change it shows as refused is
 * refused by the controller for the same reason, in the same words. Each case is one directory,
 * planned with `janus plan` (a separate process, as CI runs it) and then created as a Transaction
 * for a controller process, on targets set up afresh for it. For sources, the same agreement is
 * test/cluster/sources/plan-sources.test.ts: a pull request planned, then merged, and the
 * transaction janus run makes compared with the plan's.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { planTransaction } from '../../../src/cli/plan-changes.ts';
import { parseDirectories } from '../../../src/cli/transaction-dirs.ts';
import { repositoryPolicy } from '../../../src/gitops/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { labelled } from '../../support/cluster/instance.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { configMap, getTxn, grantJanus, serviceAccount, transaction } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { type ControllerProcess, startController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const GROUP = 'plan-match.janus.test';
const CRD = `widgets.${GROUP}`;
/** The API server's limit on all annotations of one object together (apimachinery). */
const ANNOTATIONS_LIMIT = 256 * 1024;
const STAMP_POLICY = 'plan-match-refuses-stamped';

let ns = '';
let repo = '';
let controller: ControllerProcess;

/** What one side says of a directory: would it go through, and if not, why. */
interface Verdict {
  refused: boolean;
  reason?: string | undefined;
  message?: string | undefined;
}

interface Case {
  name: string;
  serviceAccount?: string;
  /** "<order>-<name>.<type>.yaml" → the manifest. */
  files: Record<string, KubeObject>;
  /** Targets as they stand before the change. */
  setup?: () => Promise<void>;
  /** Whether both sides must refuse it (checked once they agree). */
  refused: false | string;
}

const cm = (name: string, body: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, ...body }) as KubeObject;
const widget = (name: string, size: number): KubeObject =>
  ({
    apiVersion: `${GROUP}/v1`,
    kind: 'Widget',
    metadata: { name, namespace: ns },
    spec: { size },
  }) as KubeObject;
const exists =
  (name: string, data: Record<string, string> = { before: 'yes' }) =>
  async () => {
    await clients.admin.create(configMap(ns, name, data));
  };

const CASES: Case[] = [
  { name: 'create-new', files: { '10-a.create': cm('create-new', { data: { a: '1' } }) }, refused: false },
  {
    name: 'create-existing',
    files: { '10-a.create': cm('create-existing', { data: { a: '1' } }) },
    setup: exists('create-existing'),
    refused: 'TargetExists',
  },
  {
    name: 'update-existing',
    files: { '10-a.update': cm('update-existing', { data: { a: '2' } }) },
    setup: exists('update-existing'),
    refused: false,
  },
  {
    name: 'update-missing',
    files: { '10-a.update': cm('update-missing', { data: { a: '2' } }) },
    refused: 'TargetNotFound',
  },
  {
    // A custom resource may not be replaced without a resourceVersion.
    name: 'update-custom-resource',
    files: { '10-a.update': widget('update-custom-resource', 2) },
    setup: async () => {
      await clients.admin.create(widget('update-custom-resource', 1));
    },
    refused: false,
  },
  {
    name: 'patch-existing',
    files: { '10-a.patch': cm('patch-existing', { data: { a: '3' } }) },
    setup: exists('patch-existing'),
    refused: false,
  },
  {
    name: 'patch-missing',
    files: { '10-a.patch': cm('patch-missing', { data: { a: '3' } }) },
    refused: 'TargetNotFound',
  },
  {
    name: 'delete-existing',
    files: { '10-a.delete': cm('delete-existing') },
    setup: exists('delete-existing'),
    refused: false,
  },
  { name: 'delete-missing', files: { '10-a.delete': cm('delete-missing') }, refused: false },
  {
    // May delete ConfigMaps but not read them: prepare cannot read the prior state.
    name: 'delete-unreadable',
    serviceAccount: 'blind',
    files: { '10-a.delete': cm('delete-unreadable') },
    setup: exists('delete-unreadable'),
    refused: 'ReadFailed',
  },
  {
    // An admission policy refusing objects stamped tx.janus.io/applied-by.
    name: 'stamp-refused',
    files: { '10-a.patch': cm('stamp-refused', { data: { a: '4' } }) },
    setup: exists('stamp-refused'),
    refused: 'DryRunFailed',
  },
  {
    // Annotations just under the API server's limit: the applied-by stamp takes them over it.
    name: 'annotations-at-limit',
    files: {
      '10-a.update': cm('annotations-at-limit', {
        metadata: {
          name: 'annotations-at-limit',
          namespace: '',
          annotations: {
            'example.com/notes': 'x'.repeat(ANNOTATIONS_LIMIT - 'example.com/notes'.length - 8),
          },
        },
        data: { a: '5' },
      }),
    },
    setup: exists('annotations-at-limit'),
    refused: 'DryRunFailed',
  },
];

describe('janus plan and the controller', () => {
  for (const c of CASES) {
    it(`agree on ${c.name}`, async () => {
      await c.setup?.();
      const dir = await writeDirectory(c);
      const planned = await planVerdict(dir);
      const applied = await controllerVerdict(dir, c.name);
      expect(normalize(planned)).toEqual(normalize(applied));
      expect(applied.refused ? applied.reason : false).toBe(c.refused);
    });
  }
});

/**
 * A source's transaction (Apply changes under the source's manager, spec.sourceRef) has no
 * directory: the Git side will make it from a render and plan it with planTransaction, as here.
 */
interface ApplyCase {
  name: string;
  content: Record<string, unknown>;
  setup?: () => Promise<void>;
  /** What the plan shows, or the refusal both must give. */
  expected: 'create' | 'update' | string;
}

const APPLY_CASES: ApplyCase[] = [
  { name: 'apply-new', content: { data: { a: '1' } }, expected: 'create' },
  {
    name: 'apply-existing',
    content: { data: { a: '2' } },
    setup: exists('apply-existing'),
    expected: 'update',
  },
  {
    // ConfigMap data holds strings: the API server refuses the apply, dry run and commit alike.
    name: 'apply-invalid',
    content: { data: { a: 3 } },
    setup: exists('apply-invalid'),
    expected: 'DryRunFailed',
  },
];

describe('janus plan and the controller, on a source’s Apply changes', () => {
  for (const c of APPLY_CASES) {
    it(`agree on ${c.name}`, async () => {
      await c.setup?.();
      const txn = transaction(
        ns,
        c.name,
        [
          {
            target: { apiVersion: 'v1', kind: 'ConfigMap', name: c.name },
            type: 'Apply',
            content: c.content,
          },
        ],
        { serviceAccountName: 'deployer' },
      );
      txn.spec.sourceRef = { name: 'shop' };
      const plan = await planTransaction(txn, `sources/shop.yaml`, {
        objects: clients.admin,
        asServiceAccount: true,
        self: undefined,
        sopsKinds: [],
      });
      expect(plan.problems).toEqual([]);
      const [change] = plan.changes;
      const planned: Verdict =
        change?.action === 'error'
          ? { refused: true, reason: change.reason, message: change.error }
          : { refused: false };
      await clients.admin.create(txn as unknown as KubeObject);
      const applied = verdictOf(await settledTxn(c.name));
      expect(normalize(planned)).toEqual(normalize(applied));
      expect(applied.refused ? applied.reason : change?.action).toBe(c.expected);
    });
  }
});

beforeAll(async () => {
  ns = `plan-match-${Math.random().toString(16).slice(2, 8)}`;
  await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await grantJanus(clients.admin, ns);
  await ensureWidgetCrd();
  const all = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  await serviceAccount(clients.admin, ns, 'deployer', [
    { apiGroups: [''], resources: ['configmaps'], verbs: all },
    { apiGroups: [GROUP], resources: ['widgets'], verbs: all },
  ]);
  await serviceAccount(clients.admin, ns, 'blind', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update', 'patch', 'delete'] },
  ]);
  await refuseStampedObjects('stamp-refused');
  repo = await mkdtemp(join(tmpdir(), 'janus-plan-match-'));
  controller = await startController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns });
});

afterAll(async () => {
  await controller?.stop();
  await rm(repo, { recursive: true, force: true });
  for (const kind of ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy']) {
    await clients.admin
      .delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name: STAMP_POLICY })
      .catch(() => {});
  }
  await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
});

async function writeDirectory(c: Case): Promise<string> {
  const dir = join(repo, 'transactions', c.name);
  const files: Record<string, string> = {
    'transaction.yaml': JSON.stringify({
      apiVersion: 'tx.janus.io/v1alpha1',
      kind: 'Transaction',
      metadata: { name: c.name, namespace: ns },
      spec: { serviceAccountName: c.serviceAccount ?? 'deployer' },
    }),
  };
  for (const [file, object] of Object.entries(c.files)) {
    files[`${file}.yaml`] = JSON.stringify({ ...object, metadata: { ...object.metadata, namespace: ns } });
  }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  return dir;
}

const policyEnv = () => ({
  JANUS_ALLOWED_NAMESPACES: ns,
  JANUS_ALLOWED_SERVICE_ACCOUNTS: 'deployer,blind',
});

async function planVerdict(dir: string): Promise<Verdict> {
  const result = await janus(['plan', dir, '-o', 'json'], {
    kubeconfig: clients.kubeconfigs.admin,
    env: policyEnv(),
  });
  const [plan] = JSON.parse(result.stdout) as {
    problems: string[];
    changes: { action: string; reason?: string; error?: string }[];
  }[];
  expect(plan?.problems).toEqual([]);
  const refused = plan?.changes.find((c) => c.action === 'error');
  return refused ? { refused: true, reason: refused.reason, message: refused.error } : { refused: false };
}

/** The same directory, parsed as janus run parses it, created for the controller. */
async function controllerVerdict(dir: string, name: string): Promise<Verdict> {
  const policy = repositoryPolicy({
    defaultNamespace: ns,
    allowedNamespaces: ns,
    allowedServiceAccounts: 'deployer,blind',
    controllerNamespace: 'janus-system',
  });
  const [parsed] = await parseDirectories(dir, { policy });
  if (!parsed?.ok) throw new Error(`${dir} does not parse: ${JSON.stringify(parsed)}`);
  // As janus run creates it: labelled with its installation's instance.
  await clients.admin.create(labelled(parsed.transaction, controller.instance) as unknown as KubeObject);
  return verdictOf(await settledTxn(name));
}

function settledTxn(name: string): Promise<Transaction> {
  return eventually(async () => {
    const t = await getTxn(clients.admin, ns, name);
    const phase = t.status?.phase;
    if (phase !== 'Committed' && phase !== 'Failed') throw new Error(`${name} is ${phase ?? 'new'}`);
    return t;
  });
}

function verdictOf(txn: Transaction): Verdict {
  if (txn.status?.phase === 'Committed') return { refused: false };
  const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
  return { refused: true, reason: ready?.reason, message: ready?.message };
}

/** The plan does not know the Transaction's uid: field managers and stamps differ only there. */
function normalize(v: Verdict): Verdict {
  if (!v.message) return v;
  return { ...v, message: v.message.replace(/@[0-9a-f-]{36}/g, '@<uid>') };
}

async function ensureWidgetCrd(): Promise<void> {
  await clients.admin
    .create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: CRD },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    } as unknown as KubeObject)
    .catch((e) => {
      if (!/AlreadyExists/.test(String(e))) throw e;
    });
  // Served once established: a list in the test namespace answers.
  await eventually(() =>
    clients.admin.client.request({ method: 'GET', path: `/apis/${GROUP}/v1/namespaces/${ns}/widgets` }),
  );
}

/**
 * A ValidatingAdmissionPolicy of this namespace that refuses the ConfigMap `name` once it carries
 * tx.janus.io/applied-by, dry runs included: the controller's stamp is what it refuses.
 */
async function refuseStampedObjects(name: string): Promise<void> {
  await clients.admin.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: STAMP_POLICY },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['configmaps'],
          },
        ],
      },
      validations: [
        {
          expression: `object.metadata.name != '${name}' || !has(object.metadata.annotations) || !('tx.janus.io/applied-by' in object.metadata.annotations)`,
          message: `${name} may not carry tx.janus.io/applied-by (test policy)`,
        },
      ],
    },
  } as unknown as KubeObject);
  await clients.admin.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: STAMP_POLICY },
    spec: {
      policyName: STAMP_POLICY,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
    },
  } as unknown as KubeObject);
  // The policy takes effect asynchronously: wait until a stamped dry run is refused.
  await eventually(async () => {
    const stamped = cm(name, {
      metadata: { name, namespace: ns, annotations: { 'tx.janus.io/applied-by': 'x' } },
    });
    try {
      await clients.admin.create(stamped, { dryRun: true });
    } catch (e) {
      if (String(e).includes('may not carry')) return;
      throw e;
    }
    throw new Error('policy not active yet');
  });
}
