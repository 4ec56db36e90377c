/**
 * The CustomResourceDefinition around one of Janus's kinds: the envelope every CRD shares (group,
 * labels, names, the `janus` category for namespaced kinds, one served and stored version), so they can differ only in
 * what is theirs — scope, schema, validations, printer columns, subresources.
 */
import type { OpenApiSchema } from '../schema.ts';
import { CATEGORIES, GROUP, VERSION } from './transaction.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'date' | 'integer' | 'number' | 'boolean';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface JanusKind {
  kind: string;
  plural: string;
  singular: string;
  shortNames?: readonly string[];
  /** Namespaced unless said. */
  scope?: 'Namespaced' | 'Cluster';
  description: string;
  spec: OpenApiSchema;
  /** The spec may be absent (an object whose every field went away). Default: required. */
  specOptional?: boolean;
  /** With a status: the status subresource is enabled. */
  status?: OpenApiSchema;
  validations?: readonly { rule: string; message: string }[];
  columns: readonly PrinterColumn[];
}

export function janusCrd(k: JanusKind) {
  const openAPIV3Schema: OpenApiSchema = {
    type: 'object',
    description: k.description,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: k.spec,
      ...(k.status && { status: k.status }),
    },
    ...(!k.specOptional && { required: ['spec'] }),
    ...(k.validations && { 'x-kubernetes-validations': [...k.validations] }),
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${k.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'janus', 'app.kubernetes.io/part-of': 'janus' },
    },
    spec: {
      group: GROUP,
      scope: k.scope ?? 'Namespaced',
      names: {
        kind: k.kind,
        listKind: `${k.kind}List`,
        plural: k.plural,
        singular: k.singular,
        ...(k.shortNames && { shortNames: [...k.shortNames] }),
        // `kubectl get janus -n team` lists a team's Janus resources, as `kubectl get flux`… would.
        // A cluster-scoped kind (InstanceClaim, the installations' bookkeeping) would show in
        // every namespace's listing, so it stays out.
        ...(k.scope !== 'Cluster' && { categories: [...CATEGORIES] }),
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          ...(k.status && { subresources: { status: {} } }),
          additionalPrinterColumns: [...k.columns],
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}
