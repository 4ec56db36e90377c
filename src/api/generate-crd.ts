/**
 * Writes the CRDs (manifests/crd/*.yaml) from the schemas, and the same files into the Helm
 * chart's crds/ (npm run generate).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { analysisTemplateCrd } from './v1alpha1/analysis-crd.ts';
import { transactionCrd } from './v1alpha1/crd.ts';
import { instanceClaimCrd } from './v1alpha1/instance-claim.ts';
import { lockTableCrd } from './v1alpha1/lock-table.ts';
import { sourceCrd } from './v1alpha1/source-crd.ts';

export const CRD_MANIFEST_PATH = fileURLToPath(
  new URL('../../manifests/crd/transactions.tx.janus.io.yaml', import.meta.url),
);

export const CHART_CRD_PATH = fileURLToPath(
  new URL('../../manifests/helm/janus/crds/transactions.tx.janus.io.yaml', import.meta.url),
);

export const ANALYSIS_TEMPLATE_CRD_PATH = fileURLToPath(
  new URL('../../manifests/crd/analysistemplates.tx.janus.io.yaml', import.meta.url),
);

export const CHART_ANALYSIS_TEMPLATE_CRD_PATH = fileURLToPath(
  new URL('../../manifests/helm/janus/crds/analysistemplates.tx.janus.io.yaml', import.meta.url),
);

export const SOURCE_CRD_PATH = fileURLToPath(
  new URL('../../manifests/crd/sources.tx.janus.io.yaml', import.meta.url),
);

export const CHART_SOURCE_CRD_PATH = fileURLToPath(
  new URL('../../manifests/helm/janus/crds/sources.tx.janus.io.yaml', import.meta.url),
);

export const INSTANCE_CLAIM_CRD_PATH = fileURLToPath(
  new URL('../../manifests/crd/instanceclaims.tx.janus.io.yaml', import.meta.url),
);

export const CHART_INSTANCE_CLAIM_CRD_PATH = fileURLToPath(
  new URL('../../manifests/helm/janus/crds/instanceclaims.tx.janus.io.yaml', import.meta.url),
);

export const LOCK_TABLE_CRD_PATH = fileURLToPath(
  new URL('../../manifests/crd/locktables.tx.janus.io.yaml', import.meta.url),
);

export const CHART_LOCK_TABLE_CRD_PATH = fileURLToPath(
  new URL('../../manifests/helm/janus/crds/locktables.tx.janus.io.yaml', import.meta.url),
);

const HEADER = '# Generated from src/api/v1alpha1 by `npm run generate`. Do not edit.\n';

export function renderCrdManifest(): string {
  return `${HEADER}${stringify(transactionCrd(), { lineWidth: 0 })}`;
}

export function renderAnalysisTemplateCrdManifest(): string {
  return `${HEADER}${stringify(analysisTemplateCrd(), { lineWidth: 0 })}`;
}

export function renderSourceCrdManifest(): string {
  return `${HEADER}${stringify(sourceCrd(), { lineWidth: 0 })}`;
}

export function renderInstanceClaimCrdManifest(): string {
  return `${HEADER}${stringify(instanceClaimCrd(), { lineWidth: 0 })}`;
}

export function renderLockTableCrdManifest(): string {
  return `${HEADER}${stringify(lockTableCrd(), { lineWidth: 0 })}`;
}

if (import.meta.main) {
  for (const path of [CRD_MANIFEST_PATH, CHART_CRD_PATH]) writeFileSync(path, renderCrdManifest());
  for (const path of [ANALYSIS_TEMPLATE_CRD_PATH, CHART_ANALYSIS_TEMPLATE_CRD_PATH]) {
    writeFileSync(path, renderAnalysisTemplateCrdManifest());
  }
  for (const path of [SOURCE_CRD_PATH, CHART_SOURCE_CRD_PATH]) writeFileSync(path, renderSourceCrdManifest());
  for (const path of [INSTANCE_CLAIM_CRD_PATH, CHART_INSTANCE_CLAIM_CRD_PATH]) {
    writeFileSync(path, renderInstanceClaimCrdManifest());
  }
  for (const path of [LOCK_TABLE_CRD_PATH, CHART_LOCK_TABLE_CRD_PATH])
    writeFileSync(path, renderLockTableCrdManifest());
}
