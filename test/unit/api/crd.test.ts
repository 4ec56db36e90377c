import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ANALYSIS_TEMPLATE_CRD_PATH,
  CHART_ANALYSIS_TEMPLATE_CRD_PATH,
  CHART_CRD_PATH,
  CRD_MANIFEST_PATH,
  renderAnalysisTemplateCrdManifest,
  renderCrdManifest,
} from '../../../src/api/generate-crd.ts';
import { transactionCrd } from '../../../src/api/v1alpha1/crd.ts';

describe('the Transaction CRD manifest', () => {
  it('is what the schema generates (run `npm run generate` after changing src/api)', () => {
    expect(readFileSync(CRD_MANIFEST_PATH, 'utf8')).toBe(renderCrdManifest());
    expect(readFileSync(CHART_CRD_PATH, 'utf8')).toBe(renderCrdManifest());
  });

  it('has the names, columns and subresources of the contract', () => {
    const crd = transactionCrd();
    expect(crd.spec.names).toMatchObject({
      kind: 'Transaction',
      plural: 'transactions',
      shortNames: ['txn'],
    });
    const version = crd.spec.versions[0];
    expect(version?.subresources).toEqual({ status: {} });
    expect(version?.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Phase',
      'Ready',
      'Status',
      'Changes',
      'Stable',
      'Age',
      'Bake',
      'Message',
    ]);
    const spec = version?.schema.openAPIV3Schema.properties?.spec;
    expect(spec?.required).toEqual(['serviceAccountName', 'changes']);
    expect(spec?.properties?.changes).toMatchObject({ minItems: 1, maxItems: 256 });
    expect(spec?.properties?.lockTimeout?.default).toBe('5m');
    expect(spec?.properties?.timeout?.default).toBe('30m');
    expect(spec?.properties?.health?.properties?.stableFor?.default).toBe('0s');
  });
});

describe('the AnalysisTemplate CRD manifest', () => {
  it('is what the schema generates, in manifests/ and in the chart', () => {
    expect(readFileSync(ANALYSIS_TEMPLATE_CRD_PATH, 'utf8')).toBe(renderAnalysisTemplateCrdManifest());
    expect(readFileSync(CHART_ANALYSIS_TEMPLATE_CRD_PATH, 'utf8')).toBe(renderAnalysisTemplateCrdManifest());
  });
});
