/** The CustomResourceDefinition for Transaction, built from the schema in transaction.ts. */
import { janusCrd } from './crd-envelope.ts';
import {
  KIND,
  PLURAL,
  SHORT_NAMES,
  SINGULAR,
  transactionSpecSchema,
  transactionStatusSchema,
} from './transaction.ts';

const READY = (field: string) => `.status.conditions[?(@.type=="Ready")].${field}`;

/** Transaction names end up in label values and in "<name>-rollback", so they are DNS labels. */
const NAME_RULE = {
  rule: "self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  message: 'metadata.name must be a DNS-1123 label (at most 63 lowercase letters, digits and "-")',
};

export function transactionCrd() {
  return janusCrd({
    kind: KIND,
    plural: PLURAL,
    singular: SINGULAR,
    shortNames: SHORT_NAMES,
    description:
      'A Transaction applies an ordered list of changes to Kubernetes resources all-or-nothing: every target is locked and snapshotted first, and if any change fails every change already made is undone in reverse order.',
    spec: transactionSpecSchema.openApi,
    status: transactionStatusSchema.openApi,
    validations: [NAME_RULE],
    // As Flux's: READY and STATUS from the Ready condition, its message with -o wide.
    columns: [
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
  });
}
