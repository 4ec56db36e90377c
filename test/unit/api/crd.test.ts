import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ANALYSIS_TEMPLATE_CRD_PATH,
  CHART_ANALYSIS_TEMPLATE_CRD_PATH,
  CHART_CRD_PATH,
  CHART_INSTANCE_CLAIM_CRD_PATH,
  CHART_LOCK_TABLE_CRD_PATH,
  CHART_SOURCE_CRD_PATH,
  CRD_MANIFEST_PATH,
  INSTANCE_CLAIM_CRD_PATH,
  LOCK_TABLE_CRD_PATH,
  renderAnalysisTemplateCrdManifest,
  renderCrdManifest,
  renderInstanceClaimCrdManifest,
  renderLockTableCrdManifest,
  renderSourceCrdManifest,
  SOURCE_CRD_PATH,
} from '../../../src/api/generate-crd.ts';
import { transactionCrd } from '../../../src/api/v1alpha1/crd.ts';
import { MAX_CHANGES, MAX_SOURCE_OBJECTS, sourceCrd } from '../../../src/api/v1alpha1/index.ts';
import { lockTableCrd } from '../../../src/api/v1alpha1/lock-table.ts';

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
    expect(spec?.properties?.changes).toMatchObject({ minItems: 1, maxItems: MAX_CHANGES });
    expect(MAX_CHANGES).toBe(512);
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

describe('the Source CRD manifest', () => {
  it('is what the schema generates, in manifests/ and in the chart', () => {
    expect(readFileSync(SOURCE_CRD_PATH, 'utf8')).toBe(renderSourceCrdManifest());
    expect(readFileSync(CHART_SOURCE_CRD_PATH, 'utf8')).toBe(renderSourceCrdManifest());
  });

  it('has the names, columns and subresources of the contract', () => {
    const crd = sourceCrd();
    expect(crd.spec.names).toMatchObject({
      kind: 'Source',
      plural: 'sources',
      shortNames: ['jsrc'],
      categories: ['janus'],
    });
    const version = crd.spec.versions[0];
    expect(version?.subresources).toEqual({ status: {} });
    expect(version?.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Applied',
      'Attempted',
      'Outcome',
      'Drift',
      'Age',
      'Message',
    ]);
    const { spec, status } = version?.schema.openAPIV3Schema.properties ?? {};
    expect(spec?.required).toEqual(['path', 'serviceAccountName']);
    // The health gate is the Transaction's, field for field.
    expect(spec?.properties?.health).toEqual(
      transactionCrd().spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.properties?.health,
    );
    // Every object of the largest render fits in one transaction on its first apply.
    expect(status?.properties?.inventory?.maxItems).toBe(MAX_SOURCE_OBJECTS);
    expect(MAX_SOURCE_OBJECTS).toBeLessThanOrEqual(MAX_CHANGES);
  });
});

describe('the InstanceClaim CRD manifest', () => {
  it('is what the schema generates, in manifests/ and in the chart; cluster-scoped', () => {
    expect(readFileSync(INSTANCE_CLAIM_CRD_PATH, 'utf8')).toBe(renderInstanceClaimCrdManifest());
    expect(readFileSync(CHART_INSTANCE_CLAIM_CRD_PATH, 'utf8')).toBe(renderInstanceClaimCrdManifest());
    expect(renderInstanceClaimCrdManifest()).toContain('scope: Cluster');
  });

  it('stays out of the janus category: `kubectl get janus -n team` would list it in every namespace', () => {
    expect(renderInstanceClaimCrdManifest()).not.toContain('categories');
    expect(renderLockTableCrdManifest()).toContain('- janus');
  });
});

describe('the LockTable CRD manifest', () => {
  it('is what the schema generates, in manifests/ and in the chart', () => {
    expect(readFileSync(LOCK_TABLE_CRD_PATH, 'utf8')).toBe(renderLockTableCrdManifest());
    expect(readFileSync(CHART_LOCK_TABLE_CRD_PATH, 'utf8')).toBe(renderLockTableCrdManifest());
  });

  it('keeps each entry whole for server-side apply, and the spec optional', () => {
    const schema = lockTableCrd().spec.versions[0]?.schema.openAPIV3Schema;
    // Without atomic entries a takeover would leave the previous holder owning fields of the
    // entry, which would outlive the new holder's release.
    expect(schema?.properties?.spec?.properties?.locks?.additionalProperties?.['x-kubernetes-map-type']).toBe(
      'atomic',
    );
    // The last release leaves a table with no spec: it must stay valid.
    expect(schema?.required).toBeUndefined();
  });
});
