/** The CustomResourceDefinition for AnalysisTemplate, built from the schema in analysis.ts. */
import { analysisTemplateSpecSchema, TEMPLATE_KIND, TEMPLATE_PLURAL, TEMPLATE_SINGULAR } from './analysis.ts';
import { janusCrd } from './crd-envelope.ts';

export function analysisTemplateCrd() {
  return janusCrd({
    kind: TEMPLATE_KIND,
    plural: TEMPLATE_PLURAL,
    singular: TEMPLATE_SINGULAR,
    description:
      "An AnalysisTemplate holds metric checks (PromQL queries with a failure condition, or URLs that must answer 2xx) that a Transaction's health gate evaluates by reference, with arguments: a platform team owns them, application teams use them.",
    spec: analysisTemplateSpecSchema.openApi,
    columns: [
      { name: 'Checks', type: 'string', jsonPath: '.spec.checks[*].name' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
}
