/**
 * Metric analysis (tx.janus.io/v1alpha1): the checks a health gate's bake window evaluates, and
 * the AnalysisTemplate resource a platform team owns to share them. One schema, from which the
 * AnalysisTemplate CRD (analysis-crd.ts) and the TypeScript types below are derived; the same
 * check schema is meant for spec.health.analysis's inline checks.
 */
import { array, type Infer, integer, object, string, withDefault } from '../schema.ts';
import { DNS_LABEL, DNS_SUBDOMAIN, DURATION_PATTERN } from './patterns.ts';

export const TEMPLATE_KIND = 'AnalysisTemplate';
export const TEMPLATE_PLURAL = 'analysistemplates';
export const TEMPLATE_SINGULAR = 'analysistemplate';

/** Bounds: a template's checks and args, a query's and a URL's length. */
export const MAX_CHECKS = 16;
export const MAX_ARGS = 32;
export const MAX_QUERY_LENGTH = 4096;
export const MAX_URL_LENGTH = 2048;
/** A check measures at most this often, and at least this often. */
export const MIN_INTERVAL = '1s';
export const MAX_INTERVAL = '10m';
export const DEFAULT_INTERVAL = '30s';
/** A check fails after this many failed measurements when the check does not say. */
export const DEFAULT_FAILURE_LIMIT = 1;
export const MAX_FAILURE_LIMIT = 100;

/** What a measurement that found no series counts as: Argo Rollouts calls it inconclusive too. */
export const NO_DATA_POLICIES = ['Inconclusive', 'Fail', 'Pass'] as const;
export type NoDataPolicy = (typeof NO_DATA_POLICIES)[number];

const OPERATOR = '(>|>=|<|<=|==|!=)';
const NUMBER = '-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?';
/** `result <op> <number>`: the condition under which a measurement fails. */
export const FAIL_WHEN_PATTERN = `^result ${OPERATOR} ${NUMBER}$`;
/** What the schema admits: the number may be a template argument, `result > {{args.max-ratio}}`. */
const FAIL_WHEN_SCHEMA_PATTERN = `^result ${OPERATOR} (${NUMBER}|\\{\\{ ?args\\.[a-zA-Z][a-zA-Z0-9_-]{0,62} ?\\}\\})$`;

/** Text that may name a template argument: `{{args.name}}` is replaced before use. */
const ARG_NAME = '^[a-zA-Z][a-zA-Z0-9_-]{0,62}$';

const secretKeyRef = object(
  {
    name: string({
      description: "A Secret in the Transaction's namespace.",
      maxLength: 253,
      pattern: DNS_SUBDOMAIN,
    }),
    key: string({ description: 'The key in its data.', minLength: 1, maxLength: 253 }),
  },
  { required: ['name', 'key'] },
);

const basicAuthRef = object(
  {
    name: string({
      description:
        "A Secret in the Transaction's namespace with the keys username and password (type kubernetes.io/basic-auth).",
      maxLength: 253,
      pattern: DNS_SUBDOMAIN,
    }),
  },
  { required: ['name'] },
);

/**
 * How the query is authorized. Read as the Transaction's ServiceAccount, never with the
 * controller's own rights: a transaction can use only the credentials its account may read.
 */
const credentials = object(
  {
    bearerToken: object({ secretKeyRef }, { required: ['secretKeyRef'] }),
    basicAuth: object({ secretRef: basicAuthRef }, { required: ['secretRef'] }),
  },
  {
    validations: [
      {
        rule: '!(has(self.bearerToken) && has(self.basicAuth))',
        message: 'credentials: bearerToken or basicAuth, not both',
      },
    ],
  },
);

const prometheus = object(
  {
    address: string({
      description:
        'The Prometheus HTTP API base, e.g. http://prometheus.monitoring:9090 (may use {{args.name}}).',
      minLength: 1,
      maxLength: MAX_URL_LENGTH,
    }),
    query: string({
      description:
        'A PromQL instant query that returns one number: a scalar or a vector of one series (may use {{args.name}}).',
      minLength: 1,
      maxLength: MAX_QUERY_LENGTH,
    }),
    failWhen: string({
      description:
        'When a measurement fails, e.g. "result > 0.05"; operators > >= < <= == !=; the number may be {{args.name}}.',
      pattern: FAIL_WHEN_SCHEMA_PATTERN,
      maxLength: 64,
    }),
    credentials,
  },
  { required: ['address', 'query', 'failWhen'] },
);

const http = object(
  {
    url: string({
      description:
        'A URL that must answer 2xx for a measurement to pass, as Flagger webhooks (may use {{args.name}}).',
      minLength: 1,
      maxLength: MAX_URL_LENGTH,
    }),
  },
  { required: ['url'] },
);

export const analysisCheckSchema = object(
  {
    name: string({
      description: 'Names the check in reasons and status.',
      maxLength: 63,
      pattern: DNS_LABEL,
    }),
    interval: withDefault(
      string({
        description: `How often the check measures, from ${MIN_INTERVAL} to ${MAX_INTERVAL}.`,
        pattern: DURATION_PATTERN,
        maxLength: 32,
        validations: [
          {
            rule: `duration(self) >= duration('${MIN_INTERVAL}')`,
            message: `interval must be at least ${MIN_INTERVAL}`,
          },
          {
            rule: `duration(self) <= duration('${MAX_INTERVAL}')`,
            message: `interval must be at most ${MAX_INTERVAL}`,
          },
        ],
      }),
      DEFAULT_INTERVAL,
    ),
    failureLimit: withDefault(
      integer({
        description: 'The check fails once this many measurements have failed.',
        minimum: 1,
        maximum: MAX_FAILURE_LIMIT,
      }),
      DEFAULT_FAILURE_LIMIT,
    ),
    noData: withDefault(
      string({
        description:
          'What a query that found no series counts as. Inconclusive: neither pass nor fail; Fail: a failed measurement; Pass: a passed one.',
        enum: NO_DATA_POLICIES,
      }),
      'Inconclusive',
    ),
    prometheus,
    http,
  },
  {
    required: ['name'],
    validations: [
      {
        rule: 'has(self.prometheus) != has(self.http)',
        message: 'a check has exactly one of prometheus or http',
      },
    ],
  },
);

const argFields = {
  name: string({ pattern: ARG_NAME, maxLength: 63 }),
  value: string({ maxLength: MAX_URL_LENGTH }),
};
/** A template's argument: without a value, every reference must give one. */
const arg = object(argFields, { required: ['name'] });
/** A reference's argument: always a value. */
const argValue = object(argFields, { required: ['name', 'value'] });

export const analysisTemplateSpecSchema = object(
  {
    args: array(arg, {
      description: 'The arguments the checks use as {{args.name}}; a value here is the default.',
      maxItems: MAX_ARGS,
      listType: 'map',
      listMapKeys: ['name'],
    }),
    checks: array(analysisCheckSchema, {
      minItems: 1,
      maxItems: MAX_CHECKS,
      listType: 'map',
      listMapKeys: ['name'],
    }),
  },
  { required: ['checks'] },
);

/**
 * How a Transaction asks for analysis (one item of spec.health.analysis): a template by name,
 * in the Transaction's namespace or a platform team's, with arguments; or a check inline.
 */
export const analysisRefSchema = object(
  {
    templateRef: object(
      {
        name: string({ maxLength: 253, pattern: DNS_SUBDOMAIN }),
        namespace: string({
          description: "The template's namespace; the Transaction's when omitted.",
          maxLength: 63,
          pattern: DNS_LABEL,
        }),
      },
      { required: ['name'] },
    ),
    args: array(argValue, {
      maxItems: MAX_ARGS,
      listType: 'map',
      listMapKeys: ['name'],
    }),
    check: analysisCheckSchema,
  },
  {
    validations: [
      {
        rule: 'has(self.templateRef) != has(self.check)',
        message: 'an analysis item has exactly one of templateRef or check',
      },
      { rule: '!has(self.args) || has(self.templateRef)', message: 'args go with a templateRef' },
    ],
  },
);

export type AnalysisCheck = Infer<typeof analysisCheckSchema>;
export type AnalysisTemplateSpec = Infer<typeof analysisTemplateSpecSchema>;
export type AnalysisRef = Infer<typeof analysisRefSchema>;
export type PrometheusCheck = NonNullable<AnalysisCheck['prometheus']>;
export type CheckCredentials = NonNullable<PrometheusCheck['credentials']>;
