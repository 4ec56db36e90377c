/** The CustomResourceDefinition for AnalysisTemplate, built from the schema in analysis.ts. */
import type { OpenApiSchema } from '../schema.ts';
import { analysisTemplateSpecSchema, TEMPLATE_KIND, TEMPLATE_PLURAL, TEMPLATE_SINGULAR } from './analysis.ts';
import { CATEGORIES, GROUP, VERSION } from './transaction.ts';

export function analysisTemplateCrd() {
  const openAPIV3Schema: OpenApiSchema = {
    type: 'object',
    description:
      "An AnalysisTemplate holds metric checks (PromQL queries with a failure condition, or URLs that must answer 2xx) that a Transaction's health gate evaluates by reference, with arguments: a platform team owns them, application teams use them.",
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: analysisTemplateSpecSchema.openApi,
    },
    required: ['spec'],
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${TEMPLATE_PLURAL}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'janus', 'app.kubernetes.io/part-of': 'janus' },
    },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: TEMPLATE_KIND,
        listKind: `${TEMPLATE_KIND}List`,
        plural: TEMPLATE_PLURAL,
        singular: TEMPLATE_SINGULAR,
        categories: [...CATEGORIES],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          additionalPrinterColumns: [
            { name: 'Checks', type: 'string', jsonPath: '.spec.checks[*].name' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}
