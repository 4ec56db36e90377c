/** The CustomResourceDefinition for Transaction, built from the schema in transaction.ts. */
import type { OpenApiSchema } from '../schema.ts';
import {
  CATEGORIES,
  GROUP,
  KIND,
  PLURAL,
  SHORT_NAMES,
  SINGULAR,
  transactionSpecSchema,
  transactionStatusSchema,
  VERSION,
} from './transaction.ts';

const READY = (field: string) => `.status.conditions[?(@.type=="Ready")].${field}`;

/** Transaction names end up in label values and in "<name>-rollback", so they are DNS labels. */
const NAME_RULE = {
  rule: "self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  message: 'metadata.name must be a DNS-1123 label (at most 63 lowercase letters, digits and "-")',
};

export function transactionCrd() {
  const openAPIV3Schema: OpenApiSchema = {
    type: 'object',
    description:
      'A Transaction applies an ordered list of changes to Kubernetes resources all-or-nothing: every target is locked and snapshotted first, and if any change fails every change already made is undone in reverse order.',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: transactionSpecSchema.openApi,
      status: transactionStatusSchema.openApi,
    },
    required: ['spec'],
    'x-kubernetes-validations': [NAME_RULE],
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${PLURAL}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'janus', 'app.kubernetes.io/part-of': 'janus' },
    },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: [...SHORT_NAMES],
        // `kubectl get janus` lists every Janus resource, as `kubectl get flux`… would.
        categories: [...CATEGORIES],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          // As Flux's: READY and STATUS from the Ready condition, its message with -o wide.
          additionalPrinterColumns: [
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Ready', type: 'string', jsonPath: READY('status') },
            {
              name: 'Status',
              type: 'string',
              description: 'reason of the Ready condition',
              jsonPath: READY('reason'),
            },
            {
              name: 'Changes',
              type: 'string',
              description: 'changes in effect now / total: after a rollback, 0/N',
              jsonPath: '.status.progress',
            },
            {
              name: 'Stable',
              type: 'date',
              description:
                'how long the targets have stayed healthy since the bake window (spec.health.stableFor) opened',
              jsonPath: '.status.health.stableSince',
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            {
              name: 'Bake',
              type: 'string',
              priority: 1,
              description: 'the bake window: how long the targets must stay healthy (spec.health.stableFor)',
              jsonPath: '.spec.health.stableFor',
            },
            { name: 'Message', type: 'string', priority: 1, jsonPath: READY('message') },
          ],
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}
