/**
 * Writes manifests/crd/transactions.tx.janus.io.yaml from the schema, and the same file into the
 * Helm chart's crds/ (npm run generate).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { transactionCrd } from './v1alpha1/crd.ts';

export const CRD_MANIFEST_PATH = fileURLToPath(
  new URL('../../manifests/crd/transactions.tx.janus.io.yaml', import.meta.url),
);

export const CHART_CRD_PATH = fileURLToPath(
  new URL('../../manifests/helm/janus/crds/transactions.tx.janus.io.yaml', import.meta.url),
);

export function renderCrdManifest(): string {
  return `# Generated from src/api/v1alpha1 by \`npm run generate\`. Do not edit.\n${stringify(transactionCrd(), { lineWidth: 0 })}`;
}

if (import.meta.main) {
  for (const path of [CRD_MANIFEST_PATH, CHART_CRD_PATH]) writeFileSync(path, renderCrdManifest());
}
