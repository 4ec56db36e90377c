/**
 * The Transaction resource (tx.janus.io/v1alpha1): its schema, from which both the CRD manifest
 * (see crd.ts) and the TypeScript types below are derived.
 */
import { REASON_PATTERN } from '../fit.ts';
import type { ObjectMeta } from '../meta.ts';
import {
  array,
  boolean,
  freeForm,
  type Infer,
  integer,
  number,
  object,
  string,
  timestamp,
  type Validation,
  withDefault,
} from '../schema.ts';
import { analysisRefSchema } from './analysis.ts';
import { DNS_LABEL, DNS_SUBDOMAIN, DURATION_PATTERN } from './patterns.ts';

export const GROUP = 'tx.janus.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'Transaction';
export const PLURAL = 'transactions';
export const SINGULAR = 'transaction';
export const SHORT_NAMES = ['txn'] as const;
export const CATEGORIES = ['janus'] as const;

/**
 * A Source's name: a DNS-1123 label short enough that its transactions, `<name>-<7 hex of the
 * commit>`, are labels too.
 */
export const MAX_SOURCE_NAME = 55;

/**
 * Hard limit on changes per transaction, so that a source's first apply of a 500-object chart is
 * one transaction. Bound by the CEL cost of the duplicate-target rule (`distinct()`, quadratic at
 * run time): measured on kube-apiserver v1.36, a create of 660 changes passes and one of 680 is
 * refused ("actual cost limit exceeded"), whatever the length of the names; 512 leaves a margin.
 * 512 changes of realistic objects (a chart's mix, ~650 bytes each) and a status of 512 items
 * with every condition message at its 32 KiB bound are 0.8 MiB, within etcd's 1.5 MiB.
 */
export const MAX_CHANGES = 512;

/**
 * Upper bounds of the durations. A live holder keeps renewing its locks, so a long lockTimeout
 * only delays how soon a dead controller's locks free; a long timeout lets one transaction hold
 * its targets (and block everyone else's releases) that long. Both are bounded so no tenant can
 * squat a shared target indefinitely.
 */
export const MAX_LOCK_TIMEOUT = '1h';
export const MAX_TIMEOUT = '24h';
/** spec.timeout when none is given: the CRD's default, and the controller's for an object written before it. */
export const DEFAULT_TIMEOUT = '30m';

export const CHANGE_TYPES = ['Create', 'Update', 'Patch', 'Delete', 'Apply'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];
/**
 * The largest SOPS-encrypted change (change.sopsContent), in characters: 1 MiB, within etcd's
 * ~1.5 MiB for the whole Transaction.
 */
export const MAX_SOPS_CONTENT_BYTES = 1024 * 1024;

export const PHASES = [
  'Pending',
  'Preparing',
  'Prepared',
  'Committing',
  'Verifying',
  'Committed',
  'RollingBack',
  'RolledBack',
  'Failed',
] as const;
export type Phase = (typeof PHASES)[number];

/** The phases a transaction ends in: nothing happens to it unless a person asks (rollback, retry). */
export const TERMINAL_PHASES = ['Committed', 'RolledBack', 'Failed'] as const satisfies readonly Phase[];
export type TerminalPhase = (typeof TERMINAL_PHASES)[number];

/** Whether `phase` (any string: a CR field, a result record) is one a transaction ends in. */
export function isTerminal(phase: string | undefined): phase is TerminalPhase {
  return (TERMINAL_PHASES as readonly string[]).includes(phase ?? '');
}

export { DNS_LABEL, DNS_SUBDOMAIN, DURATION_PATTERN } from './patterns.ts';

/**
 * Kinds known to be cluster-scoped, by "<group>/<kind>" (core group: empty). For these the API
 * server itself rejects a target namespace; other kinds are checked by the controller against
 * discovery.
 */
export const KNOWN_CLUSTER_SCOPED = [
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'scheduling.k8s.io/PriorityClass',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'networking.k8s.io/IngressClass',
  'node.k8s.io/RuntimeClass',
  'apiregistration.k8s.io/APIService',
] as const;

const celList = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/** CEL: the group part of an apiVersion ("" for the core group). */
const groupOf = (v: string) => `(${v}.contains('/') ? ${v}.split('/')[0] : '')`;

const target = object(
  {
    apiVersion: string({
      description: 'API version of the target, e.g. "v1" or "apps/v1".',
      minLength: 1,
      maxLength: 317,
      pattern: '^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?$',
    }),
    kind: string({
      description: 'Kind of the target, e.g. "ConfigMap".',
      minLength: 1,
      maxLength: 63,
      pattern: '^[A-Z][A-Za-z0-9]*$',
    }),
    name: string({
      description: 'Name of the target.',
      minLength: 1,
      maxLength: 253,
      pattern: DNS_SUBDOMAIN,
    }),
    namespace: string({
      description:
        "Namespace of the target. Defaults to the Transaction's namespace; must be empty for cluster-scoped kinds.",
      maxLength: 63,
      pattern: DNS_LABEL,
    }),
  },
  {
    required: ['apiVersion', 'kind', 'name'],
    validations: [
      {
        rule: `!has(self.__namespace__) || !((${groupOf('self.apiVersion')} + '/' + self.kind) in ${celList(KNOWN_CLUSTER_SCOPED)})`,
        message: 'namespace must not be set for a cluster-scoped kind',
        fieldPath: '.namespace',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);

const change = object(
  {
    target,
    type: string({ description: 'What to do to the target.', enum: CHANGE_TYPES }),
    content: freeForm({
      description:
        'The manifest to create, the full object to replace the target with, the fields to server-side apply (Patch), or the whole object to server-side apply (Apply). Forbidden for Delete.',
    }),
    sopsContent: string({
      description:
        "Instead of content, for Create, Update and Apply: the manifest as a SOPS-encrypted document (YAML or JSON, exactly as in Git), decrypted only when the change is dry-run or applied, with the age keys of the Secret janus-sops-age in the Transaction's namespace, read as its ServiceAccount.",
      minLength: 1,
      maxLength: MAX_SOPS_CONTENT_BYTES,
    }),
  },
  {
    required: ['target', 'type'],
    validations: [
      {
        rule: "self.type == 'Delete' ? !has(self.content) : (has(self.content) || has(self.sopsContent))",
        messageExpression:
          "self.type == 'Delete' ? 'content is forbidden for a Delete change' : 'content is required for a ' + self.type + ' change'",
        fieldPath: '.content',
      },
      {
        rule: "!has(self.sopsContent) || ((self.type == 'Create' || self.type == 'Update' || self.type == 'Apply') && !has(self.content))",
        message: 'sopsContent is for a Create, Update or Apply change, instead of content',
        fieldPath: '.sopsContent',
      },
    ],
  },
);

/** CEL: a target's identity: group, kind, namespace (empty means the Transaction's), name. */
const targetKey = (v: string) =>
  `${groupOf(`${v}.target.apiVersion`)} + '/' + ${v}.target.kind + '/' + (has(${v}.target.__namespace__) ? ${v}.target.__namespace__ : '') + '/' + ${v}.target.name`;

/** Which targets the health gate waits for after commit (and after a rollback). */
export const HEALTH_TARGETS = ['Auto', 'All', 'None'] as const;
export type HealthTargets = (typeof HEALTH_TARGETS)[number];
export const DEFAULT_HEALTH_TIMEOUT = '5m';
export const MAX_HEALTH_TIMEOUT = '1h';
/**
 * The bake window: how long the targets must stay healthy after they first are. 0s (the default)
 * commits at the first healthy look, as before the window existed; at most 1h, and less than
 * spec.timeout (the window must fit in the transaction's own deadline).
 */
export const DEFAULT_HEALTH_STABLE_FOR = '0s';
export const MAX_HEALTH_STABLE_FOR = '1h';
/** spec.health.analysis: at most this many items (templates or inline checks). */
export const MAX_HEALTH_ANALYSIS = 8;
/** status.health.analysis: at most this many checks in all, once templates are expanded. */
export const MAX_ANALYSIS_CHECKS = 16;
/** Each check keeps its last this many measurements in the status (counts cover them all). */
export const MAX_KEPT_MEASUREMENTS = 10;
/** A measurement's message in the status: it names the query, the value and the threshold. */
const MAX_MEASUREMENT_MESSAGE = 512;

/** spec.health: the health gate. A Source's spec.health is this same schema. */
export const healthSchema = object({
  targets: withDefault(
    string({
      description:
        'Auto: the targets whose kind has a health rule (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod, PersistentVolumeClaim, Service); All: every target not deleted (other kinds by their Ready condition); None: no health gate.',
      enum: HEALTH_TARGETS,
    }),
    'Auto',
  ),
  timeout: withDefault(
    string({
      description:
        'How long the targets may take to become healthy after commit (and again after a rollback). From 1s to 1h; never past spec.timeout.',
      pattern: DURATION_PATTERN,
      maxLength: 32,
      validations: [
        { rule: "duration(self) >= duration('1s')", message: 'health.timeout must be at least 1s' },
        {
          rule: `duration(self) <= duration('${MAX_HEALTH_TIMEOUT}')`,
          message: `health.timeout must be at most ${MAX_HEALTH_TIMEOUT}`,
        },
      ],
    }),
    DEFAULT_HEALTH_TIMEOUT,
  ),
  stableFor: withDefault(
    string({
      description:
        'Bake time: once healthy, the targets must stay healthy this long, locks held, before the transaction is Committed; a regression in the window (a pod crash-looping, restarts climbing, Ready or Available turning False) rolls it back. From 0s (commit at the first healthy look) to 1h, less than spec.timeout.',
      pattern: DURATION_PATTERN,
      maxLength: 32,
      validations: [
        {
          rule: `duration(self) <= duration('${MAX_HEALTH_STABLE_FOR}')`,
          message: `health.stableFor must be at most ${MAX_HEALTH_STABLE_FOR}`,
        },
      ],
    }),
    DEFAULT_HEALTH_STABLE_FOR,
  ),
  analysis: array(analysisRefSchema, {
    description:
      "Metric analysis during the bake window: AnalysisTemplates by name (with args) or checks inline. Each check measures every interval from the window's opening; one reaching its failure limit rolls the transaction back, and at the window's end each must pass (an inconclusive one rolls back unless its noData is Pass). Needs stableFor > 0.",
    maxItems: MAX_HEALTH_ANALYSIS,
    listType: 'atomic',
  }),
});

/** spec.lockTimeout, of a Transaction and of a Source. */
export const lockTimeoutSchema = withDefault(
  string({
    description:
      'Duration of each lock Lease; a lock held by a dead controller frees after it. From 1s to 1h.',
    pattern: DURATION_PATTERN,
    maxLength: 32,
    validations: [
      { rule: "duration(self) >= duration('1s')", message: 'lockTimeout must be at least 1s' },
      {
        rule: `duration(self) <= duration('${MAX_LOCK_TIMEOUT}')`,
        message: `lockTimeout must be at most ${MAX_LOCK_TIMEOUT}`,
      },
    ],
  }),
  '5m',
);

/** spec.timeout, of a Transaction and of a Source. */
export const timeoutSchema = withDefault(
  string({
    description: 'Deadline for the whole transaction, from its start. From 1s to 24h.',
    pattern: DURATION_PATTERN,
    maxLength: 32,
    validations: [
      { rule: "duration(self) >= duration('1s')", message: 'timeout must be at least 1s' },
      {
        rule: `duration(self) <= duration('${MAX_TIMEOUT}')`,
        message: `timeout must be at most ${MAX_TIMEOUT}`,
      },
    ],
  }),
  DEFAULT_TIMEOUT,
);

/** CEL rules of a spec with a timeout and a health gate: the bake window must fit. */
export const HEALTH_WINDOW_RULES: Validation[] = [
  {
    rule: '!has(self.health) || !has(self.health.stableFor) || !has(self.timeout) || duration(self.health.stableFor) < duration(self.timeout)',
    message: 'health.stableFor must be less than timeout: the bake window must fit in the transaction',
    fieldPath: '.health.stableFor',
  },
  {
    rule: "!has(self.health) || !has(self.health.analysis) || size(self.health.analysis) == 0 || (has(self.health.stableFor) && duration(self.health.stableFor) > duration('0s'))",
    message: 'health.analysis needs health.stableFor > 0s: the checks are measured during the bake window',
    fieldPath: '.health.analysis',
  },
];

/**
 * The Source (src/api/v1alpha1/source.ts) whose commit a Transaction applies: its Apply changes
 * write under the source's field manager (saga/targets.ts sourceFieldManager), shared by every
 * transaction of that source, so a field removed from Git is removed from the cluster. Set only
 * by the Janus controller: the admission policy janus-transaction-provenance refuses a create
 * that carries it from anyone else, since another source's manager would let its author take or
 * drop that source's fields.
 */
const sourceRef = object(
  {
    name: string({
      description: "The Source's name, in the Transaction's namespace.",
      minLength: 1,
      maxLength: MAX_SOURCE_NAME,
      pattern: DNS_LABEL,
    }),
  },
  {
    required: ['name'],
    description:
      "The Source this transaction applies a commit of (set by Janus only): its Apply changes write under the source's field manager, janus-source:<namespace>/<name>.",
  },
);

export const transactionSpecSchema = object(
  {
    serviceAccountName: string({
      description:
        "The ServiceAccount, in the Transaction's namespace, that every read and write of a target runs as.",
      minLength: 1,
      maxLength: 253,
      pattern: DNS_SUBDOMAIN,
    }),
    lockTimeout: lockTimeoutSchema,
    timeout: timeoutSchema,
    health: healthSchema,
    sourceRef,
    changes: array(change, {
      description: 'The changes, applied in list order and rolled back in reverse order.',
      minItems: 1,
      maxItems: MAX_CHANGES,
      listType: 'atomic',
      validations: [
        {
          // distinct() keeps this within the API server's CEL cost budget at 256 items; a pairwise
          // exists_one() comparison does not.
          rule: `self.map(c, ${targetKey('c')}).distinct().size() == self.size()`,
          message: 'two changes have the same target; each resource may appear in one change only',
        },
      ],
    }),
  },
  {
    required: ['serviceAccountName', 'changes'],
    validations: [{ rule: 'self == oldSelf', message: 'spec is immutable' }, ...HEALTH_WINDOW_RULES],
  },
);

/** kstatus's outcomes that matter to the gate. */
export const HEALTH_STATUSES = ['Current', 'InProgress', 'Failed'] as const;
/** What the gate is checking: the committed changes, or the state a rollback restored. */
export const HEALTH_CHECKS = ['Commit', 'Rollback'] as const;
/**
 * Regressed: healthy at first, then not, inside the bake window (health.stableFor).
 * AnalysisFailed: a metric analysis check (health.analysis) failed, or could not be measured, in it.
 */
export const HEALTH_RESULTS = ['Healthy', 'Unhealthy', 'TimedOut', 'Regressed', 'AnalysisFailed'] as const;

/**
 * Bounds on the status's free text (conditions as metav1.Condition). Much of it comes from others
 * (targets' status, API errors, annotations): src/api/fit.ts fits every string to these before a
 * status write, reading them from this schema. 256 items with an error and a health message each
 * stay well inside an object's 1.5 MiB.
 */
const MAX_REASON = 1024;
const MAX_ITEM_ERROR = 1024;

const MEASUREMENT_PHASES = ['Passed', 'Failed', 'NoData', 'Error'] as const;

/** One measurement of an analysis check, as src/analysis/measurement.ts takes it. */
const measurement = object(
  {
    phase: string({ enum: MEASUREMENT_PHASES }),
    at: timestamp(),
    value: number({ description: 'The number the query returned, or the status the URL answered.' }),
    message: string({ maxLength: MAX_MEASUREMENT_MESSAGE }),
  },
  { required: ['phase', 'at', 'message'] },
);

/** An analysis check's state: what the verdict is computed from after a restart. */
const analysisCheckStatus = object(
  {
    name: string({ maxLength: 63 }),
    measured: integer({ minimum: 0, description: 'Measurements taken in all.' }),
    failed: integer({
      minimum: 0,
      description: "Measurements that counted as failed in all (by the check's noData policy).",
    }),
    lastFailure: measurement,
    measurements: array(measurement, {
      description: `The last ${MAX_KEPT_MEASUREMENTS} measurements, oldest first.`,
      maxItems: MAX_KEPT_MEASUREMENTS,
      listType: 'atomic',
    }),
    nextAt: timestamp({ description: 'When the check measures next.' }),
  },
  { required: ['name', 'measured', 'failed'] },
);

const itemStatus = object({
  target: string({ description: 'The target, as "<apiVersion> <kind> <namespace>/<name>".' }),
  type: string({ enum: CHANGE_TYPES }),
  prepared: boolean(),
  committed: boolean(),
  rolledBack: boolean(),
  resourceVersion: string({
    description: 'The resourceVersion seen at prepare; empty if the target did not exist.',
  }),
  committedResourceVersion: string({
    description: "The target's resourceVersion right after this change was applied.",
  }),
  lease: string({ description: 'The lock Lease, as "<namespace>/<name>".' }),
  snapshotDigest: string({
    description: 'SHA-256 of the prior state stored at prepare; a rollback restores only that.',
  }),
  committedFingerprint: string({
    description:
      'SHA-256 of what this change left (spec and user metadata, not status): tells a controller’s status write from someone else’s change at rollback.',
  }),
  rolloutRevision: string({
    maxLength: 253,
    description:
      'The revision this change rolled out (a StatefulSet’s status.updateRevision once its controller saw the change), recorded before a rollback restores the target: after it, the pods of this revision left stuck are deleted (forced rollback).',
  }),
  health: object({
    status: string({ enum: HEALTH_STATUSES }),
    reason: string({ maxLength: MAX_REASON, pattern: REASON_PATTERN }),
    message: string({ maxLength: 1024 }),
    since: timestamp({ description: 'When the target reached this health status.' }),
    restarts: integer({
      minimum: 0,
      format: 'int64',
      description:
        "Restarts of the target's current-revision containers when the bake window opened: more during the window is a regression.",
    }),
  }),
  conflict: boolean({
    description: 'Rollback left this item alone because someone else changed it after commit.',
  }),
  error: string({ maxLength: MAX_ITEM_ERROR }),
});

/** A status condition, as metav1.Condition. The Source's status uses it too. */
export const conditionSchema = object(
  {
    type: string({ minLength: 1, maxLength: 316 }),
    status: string({ enum: ['True', 'False', 'Unknown'] }),
    reason: string({ minLength: 1, maxLength: MAX_REASON, pattern: REASON_PATTERN }),
    message: string({ maxLength: 32768 }),
    lastTransitionTime: timestamp(),
    observedGeneration: integer({ minimum: 0, format: 'int64' }),
  },
  { required: ['type', 'status', 'reason', 'lastTransitionTime'] },
);

export const transactionStatusSchema = object({
  phase: string({ enum: PHASES }),
  installation: string({
    description:
      'The installation that wrote this status last: its controller namespace. Another installation of the same instance does not drive the Transaction while that one is alive (condition InstallationConflict).',
    maxLength: 63,
  }),
  observedGeneration: integer({ format: 'int64' }),
  progress: string({ description: 'Committed changes over total, e.g. "3/10".' }),
  items: array(itemStatus, { maxItems: MAX_CHANGES, listType: 'atomic' }),
  rollbackRef: string({ description: 'Name of the rollback store ConfigMap.' }),
  fieldManager: string({
    description:
      'The server-side apply field manager of this transaction’s writes, its own alone; recorded at prepare.',
  }),
  startedAt: timestamp(),
  deadline: timestamp({ description: 'When the current attempt times out.' }),
  completedAt: timestamp(),
  recoveryAttempts: integer({ minimum: 0, description: 'Automatic rollback attempts made from Failed.' }),
  nextRecoveryAt: timestamp(),
  health: object({
    check: string({ enum: HEALTH_CHECKS, description: 'What is being checked: the commit or the rollback.' }),
    startedAt: timestamp(),
    deadline: timestamp({
      description: 'When the check gives up: health.timeout after it started, at most spec.timeout.',
    }),
    stableSince: timestamp({
      description:
        'When the bake window opened: the first look at which every target was healthy. The check passes at stableSince + spec.health.stableFor.',
    }),
    completedAt: timestamp(),
    result: string({ enum: HEALTH_RESULTS }),
    message: string({ maxLength: 4096 }),
    analysis: array(analysisCheckStatus, {
      description:
        'Each analysis check measured in the bake window, in the order spec.health.analysis lists them.',
      maxItems: MAX_ANALYSIS_CHECKS,
      listType: 'atomic',
    }),
  }),
  conditions: array(conditionSchema, { listType: 'map', listMapKeys: ['type'], maxItems: 16 }),
  source: object({
    repository: string(),
    revision: string({ description: '"<branch>@sha1:<commit>"' }),
    path: string(),
  }),
});

export type TransactionSpec = Infer<typeof transactionSpecSchema>;
export type Change = TransactionSpec['changes'][number];
export type ChangeTarget = Change['target'];
export type TransactionStatus = Infer<typeof transactionStatusSchema>;
export type ItemStatus = NonNullable<TransactionStatus['items']>[number];
export type Condition = NonNullable<TransactionStatus['conditions']>[number];
export type TransactionSource = NonNullable<TransactionStatus['source']>;
export type HealthCheckStatus = NonNullable<TransactionStatus['health']>;
export type ItemHealth = NonNullable<ItemStatus['health']>;
export type HealthSpec = NonNullable<TransactionSpec['health']>;
export type AnalysisCheckStatus = NonNullable<HealthCheckStatus['analysis']>[number];
export type MeasurementStatus = NonNullable<AnalysisCheckStatus['measurements']>[number];
export type { ObjectMeta };

export interface Transaction {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: TransactionSpec;
  status?: TransactionStatus;
  /** Any Kubernetes object may carry more top-level fields. */
  [key: string]: unknown;
}

/** Annotations users set; each is one-shot and removed by the controller. */
export const ANNOTATION_REQUEST_ROLLBACK = `${GROUP}/request-rollback`;
export const ANNOTATION_RETRY_ROLLBACK = `${GROUP}/retry-rollback`;
/** Stop a transaction in flight and undo what it committed (janus cancel). */
export const ANNOTATION_CANCEL = `${GROUP}/cancel`;

/** Annotations the Git materializer sets when it creates a Transaction. */
export const ANNOTATION_SOURCE_REPOSITORY = `${GROUP}/source-repository`;
export const ANNOTATION_SOURCE_REVISION = `${GROUP}/source-revision`;
export const ANNOTATION_SOURCE_PATH = `${GROUP}/source-path`;
/**
 * Proof that Janus created the Transaction from that directory: an HMAC of its name and source
 * annotations under a key only the controller holds (in its Git cursor). Checked before a
 * Transaction found under a directory's name is adopted.
 */
export const ANNOTATION_SOURCE_STAMP = `${GROUP}/source-stamp`;
/** Position of the source commit on the watched branch; orders contested locks. */
export const ANNOTATION_SOURCE_SEQUENCE = `${GROUP}/source-sequence`;
/** A source's transaction: the digest of the commit's whole render (src/sources/inventory.ts renderDigest). */
export const ANNOTATION_SOURCE_RENDER_DIGEST = `${GROUP}/source-render-digest`;
/**
 * A source's transaction: what the render dropped and the transaction leaves in the cluster, and
 * why (never pruned, or the source does not prune), as a JSON list of sentences, bounded.
 */
export const ANNOTATION_SOURCE_LEFT = `${GROUP}/source-left`;
/** A source's transaction: the Source (in its namespace) whose commit it applies, for selection. */
export const LABEL_SOURCE = `${GROUP}/source`;

/**
 * The largest source-sequence Janus hands out: 2^40, a thousand directories a second for 34
 * years. A larger value (or one that is not a whole number) is not one Janus wrote: it orders
 * nothing and never raises the next sequence.
 */
export const MAX_SOURCE_SEQUENCE = 2 ** 40;

/** A Transaction's place in Git order, when it has a valid one. */
export function sourceSequence(annotations: Record<string, string> | undefined): number | undefined {
  const text = annotations?.[ANNOTATION_SOURCE_SEQUENCE];
  if (text === undefined || !/^\d{1,16}$/.test(text)) return undefined;
  const sequence = Number(text);
  return sequence <= MAX_SOURCE_SEQUENCE ? sequence : undefined;
}

export const FINALIZER = `${GROUP}/lease-cleanup`;
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'janus';
export const LABEL_TRANSACTION = `${GROUP}/transaction`;
export const LABEL_TRANSACTION_UID = `${GROUP}/transaction-uid`;
/**
 * Which installation of Janus handles a Transaction (src/controller/installation.ts): absent for
 * the default installation, the `--instance` name of another. Immutable once created
 * (manifests/policy/transaction-instance.yaml).
 */
export const LABEL_INSTANCE = `${GROUP}/instance`;
