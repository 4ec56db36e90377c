/**
 * The Source resource (tx.janus.io/v1alpha1): a path of the watched repository rendered as a
 * whole (a Kustomize overlay, a Helm chart, a folder of plain manifests) that Janus keeps applied,
 * each commit that changes its render one Transaction (docs/sources.md). `janus run` creates it
 * from the file in Git and writes its status; nobody else writes either (the admission policy
 * janus-source-provenance). Its schema gives both the CRD (source-crd.ts) and the types below.
 */
import type { ObjectMeta } from '../meta.ts';
import {
  array,
  boolean,
  freeForm,
  type Infer,
  integer,
  object,
  string,
  timestamp,
  withDefault,
} from '../schema.ts';
import { DNS_LABEL, DNS_SUBDOMAIN, DURATION_PATTERN } from './patterns.ts';
import {
  conditionSchema,
  HEALTH_WINDOW_RULES,
  healthSchema,
  lockTimeoutSchema,
  MAX_CHANGES,
  MAX_SOURCE_NAME,
  timeoutSchema,
} from './transaction.ts';

export const SOURCE_KIND = 'Source';
export const SOURCE_PLURAL = 'sources';
export const SOURCE_SINGULAR = 'source';
export const SOURCE_SHORT_NAMES = ['jsrc'] as const;

/**
 * The most objects one source may render, and so keep in its inventory: its first apply is one
 * transaction of that many changes, which the CRD allows (MAX_CHANGES). A later commit's changes
 * (new and changed objects, and prunes) must fit in MAX_CHANGES too; only a commit that replaces
 * more than half of a render this large at once needs more, and is refused (docs/sources.md).
 */
export const MAX_SOURCE_OBJECTS = MAX_CHANGES;
/** Drifted objects named in the status; `drift.count` counts them all. */
export const MAX_DRIFT_LISTED = 32;
export const MAX_VALUES_FILES = 32;
export const MAX_API_VERSIONS = 64;
const MAX_PATH = 1024;

/** A path in the repository, from its root: never absolute, never out of it. */
const repositoryPath = (description: string) =>
  string({
    description,
    minLength: 1,
    maxLength: MAX_PATH,
    validations: [
      {
        rule: "!self.startsWith('/') && !self.split('/').exists(p, p == '..')",
        message: 'must be a path in the repository, from its root: not absolute, no ".." segment',
      },
    ],
  });

export const HELM_HOOKS = ['Ignore', 'Include'] as const;

const helm = object(
  {
    releaseName: string({
      description: "helm template's release name (default: the Source's name).",
      minLength: 1,
      maxLength: 53,
      pattern: DNS_LABEL,
    }),
    valuesFiles: array(
      string({ description: "Relative to the chart's folder.", minLength: 1, maxLength: MAX_PATH }),
      {
        description: 'Values files merged in order, like helm -f.',
        maxItems: MAX_VALUES_FILES,
        listType: 'atomic',
      },
    ),
    values: freeForm({ description: 'Inline values, merged last (like Flux’s spec.values).' }),
    includeCRDs: withDefault(boolean({ description: "Render the chart's crds/ folder." }), true),
    hooks: withDefault(
      string({
        description:
          'Ignore: hook resources are not rendered; Include: pre-install/pre-upgrade hooks applied first, post-install/post-upgrade hooks last.',
        enum: HELM_HOOKS,
      }),
      'Ignore',
    ),
    kubeVersion: string({
      description: ".Capabilities.KubeVersion (default: Helm's own; a render never asks the cluster).",
      maxLength: 64,
      pattern: '^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$',
    }),
    apiVersions: array(string({ minLength: 1, maxLength: 317 }), {
      description: 'Extra .Capabilities.APIVersions.',
      maxItems: MAX_API_VERSIONS,
      listType: 'atomic',
    }),
  },
  { description: 'Render the path, a Helm chart, with helm template.' },
);

const drift = object({
  interval: withDefault(
    string({
      description:
        'How often the live objects are compared with the last applied render: 0s never, else from 1m to 24h.',
      pattern: DURATION_PATTERN,
      maxLength: 32,
      validations: [
        {
          rule: "duration(self) == duration('0s') || (duration(self) >= duration('1m') && duration(self) <= duration('24h'))",
          message: 'drift.interval must be 0s (never) or from 1m to 24h',
        },
      ],
    }),
    '10m',
  ),
  correct: withDefault(
    boolean({ description: 'Correct drift as a transaction of its own (false: only report it).' }),
    false,
  ),
});

export const sourceSpecSchema = object(
  {
    path: repositoryPath(
      "The folder rendered, in the watched repository, from its root: a kustomization, a chart's folder, or plain manifests.",
    ),
    kustomize: object({}, { description: 'Render the path with kustomize.' }),
    helm,
    plain: object(
      { recurse: withDefault(boolean({ description: 'Walk subfolders too.' }), false) },
      { description: 'Read the path as plain manifests (*.yaml, *.yml, *.json).' },
    ),
    serviceAccountName: string({
      description:
        "The ServiceAccount, in the Source's namespace, that every read and write of the rendered objects runs as.",
      minLength: 1,
      maxLength: 253,
      pattern: DNS_SUBDOMAIN,
    }),
    prune: withDefault(
      boolean({
        description:
          'Delete the objects this source applied and no longer renders (never Namespaces, CustomResourceDefinitions, or objects annotated tx.janus.io/prune: disabled).',
      }),
      false,
    ),
    timeout: timeoutSchema,
    lockTimeout: lockTimeoutSchema,
    health: healthSchema,
    drift,
  },
  {
    required: ['path', 'serviceAccountName'],
    validations: [
      {
        rule: '[has(self.kustomize), has(self.helm), has(self.plain)].filter(x, x).size() == 1',
        message: 'exactly one of kustomize, helm and plain says how the path is rendered',
      },
      ...HEALTH_WINDOW_RULES,
    ],
  },
);

/** What a commit's transaction came to: the status's lastAttempted.outcome. */
export const SOURCE_OUTCOMES = [
  'InProgress',
  'Committed',
  'RolledBack',
  'Failed',
  'RenderFailed',
  'Refused',
] as const;
export type SourceOutcome = (typeof SOURCE_OUTCOMES)[number];

const COMMIT_PATTERN = '^[0-9a-f]{40}([0-9a-f]{24})?$';
const SHORT_COMMIT_PATTERN = '^[0-9a-f]{7}$';

const revision = {
  revision: string({ description: 'The commit, in full.', pattern: COMMIT_PATTERN }),
  shortRevision: string({
    description: 'Its first 7 hex digits, for kubectl get.',
    pattern: SHORT_COMMIT_PATTERN,
  }),
  transaction: string({ description: "The commit's Transaction, in the Source's namespace.", maxLength: 63 }),
};

/** One object the source applied: what it compares the next render with, and may prune. */
export const inventoryEntrySchema = object(
  {
    apiVersion: string({ minLength: 1, maxLength: 317 }),
    kind: string({ minLength: 1, maxLength: 63 }),
    namespace: string({ description: 'Empty for a cluster-scoped object.', maxLength: 63 }),
    name: string({ minLength: 1, maxLength: 253 }),
    digest: string({
      description:
        'HMAC-SHA256, under a key only the controller holds, of the rendered object (canonical JSON): tells a changed render from an unchanged one and nothing about its values.',
      pattern: '^[0-9a-f]{64}$',
    }),
    pruneDisabled: boolean({
      description: 'The render that applied it set tx.janus.io/prune: disabled: never pruned.',
    }),
  },
  { required: ['apiVersion', 'kind', 'name', 'digest'] },
);

export const sourceStatusSchema = object({
  observedGeneration: integer({ format: 'int64' }),
  lastApplied: object({
    ...revision,
    time: timestamp({ description: 'When its transaction committed.' }),
  }),
  lastAttempted: object({
    ...revision,
    outcome: string({ enum: SOURCE_OUTCOMES }),
    reason: string({ maxLength: 32768 }),
    renderDigest: string({
      description: 'The digest of the whole render: the same render is not tried again.',
      pattern: '^[0-9a-f]{64}$',
    }),
  }),
  inventory: array(inventoryEntrySchema, {
    description: `Every object the source applied (at most ${MAX_SOURCE_OBJECTS}), as of its last committed transaction.`,
    maxItems: MAX_SOURCE_OBJECTS,
    listType: 'atomic',
  }),
  drift: object({
    checkedAt: timestamp(),
    count: integer({ minimum: 0, description: 'Objects that differ from the last applied render.' }),
    objects: array(string({ maxLength: 1024 }), {
      description: `The first ${MAX_DRIFT_LISTED} of them, as "<apiVersion> <kind> <namespace>/<name>".`,
      maxItems: MAX_DRIFT_LISTED,
      listType: 'atomic',
    }),
    correction: object({
      transaction: string({
        description: 'The Transaction that corrects the drift (drift.correct), <source>-drift-<sequence>.',
        maxLength: 63,
      }),
      outcome: string({ enum: ['InProgress', 'Committed', 'RolledBack', 'Failed'] }),
      objects: integer({ minimum: 0, description: 'The drifted objects it applies again.' }),
      time: timestamp({ description: 'When it was created, or ended.' }),
      failures: integer({
        minimum: 0,
        description:
          'Corrections in a row that ended RolledBack or Failed; reset when one commits, when the drift is gone, or when a commit of the source is applied.',
      }),
      retryAfter: timestamp({
        description:
          'After failures, no correction is created before then (the backoff: the interval doubled with each failure, at most an hour or the interval); drift is still checked every interval.',
      }),
    }),
  }),
  conditions: array(conditionSchema, { listType: 'map', listMapKeys: ['type'], maxItems: 16 }),
});

export type SourceSpec = Infer<typeof sourceSpecSchema>;
export type SourceStatus = Infer<typeof sourceStatusSchema>;
export type InventoryEntry = Infer<typeof inventoryEntrySchema>;

export interface Source {
  apiVersion: string;
  kind: typeof SOURCE_KIND;
  metadata: ObjectMeta;
  spec: SourceSpec;
  status?: SourceStatus;
  [key: string]: unknown;
}

/** Source names: DNS labels short enough that `<name>-<7 hex>` is one too. */
export const SOURCE_NAME_RULE = {
  rule: `self.metadata.name.size() <= ${MAX_SOURCE_NAME} && self.metadata.name.matches('${DNS_LABEL}')`,
  message: `metadata.name must be a DNS-1123 label of at most ${MAX_SOURCE_NAME} characters: its transactions are <name>-<7 hex of the commit>`,
};
