/** The CustomResourceDefinition for Source, built from the schema in source.ts. */
import { janusCrd } from './crd-envelope.ts';
import {
  SOURCE_KIND,
  SOURCE_NAME_RULE,
  SOURCE_PLURAL,
  SOURCE_SHORT_NAMES,
  SOURCE_SINGULAR,
  sourceSpecSchema,
  sourceStatusSchema,
} from './source.ts';

const READY = (field: string) => `.status.conditions[?(@.type=="Ready")].${field}`;

export function sourceCrd() {
  return janusCrd({
    kind: SOURCE_KIND,
    plural: SOURCE_PLURAL,
    singular: SOURCE_SINGULAR,
    shortNames: SOURCE_SHORT_NAMES,
    description:
      'A Source is a path of the watched repository rendered as a whole (a Kustomize overlay, a Helm chart, plain manifests) that Janus keeps applied: each commit that changes its render is one Transaction, all or nothing, rolled back to the previous render if it fails. Written by Janus only, from the file in Git.',
    spec: sourceSpecSchema.openApi,
    status: sourceStatusSchema.openApi,
    validations: [SOURCE_NAME_RULE],
    columns: [
      {
        name: 'Applied',
        type: 'string',
        description: 'the last commit applied',
        jsonPath: '.status.lastApplied.shortRevision',
      },
      {
        name: 'Attempted',
        type: 'string',
        description: 'the last commit tried',
        jsonPath: '.status.lastAttempted.shortRevision',
      },
      { name: 'Outcome', type: 'string', jsonPath: '.status.lastAttempted.outcome' },
      {
        name: 'Drift',
        type: 'integer',
        description: 'objects that differ from the last applied render, when last checked',
        jsonPath: '.status.drift.count',
      },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      { name: 'Message', type: 'string', priority: 1, jsonPath: READY('message') },
    ],
  });
}
