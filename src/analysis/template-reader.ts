/**
 * Reads the AnalysisTemplate an analysis item names. Templates hold no secret (credentials are
 * Secret references, resolved in the Transaction's namespace as its ServiceAccount), so the
 * controller reads them with its own rights; but only from the Transaction's own namespace and
 * those the platform team shares templates from (policy.ts), checked before the read: a tenant
 * must not run, and see in status, another team's checks.
 */

import type { AnalysisCheck } from '../api/v1alpha1/analysis.ts';
import { type AnalysisRef, type AnalysisTemplateSpec, TEMPLATE_KIND } from '../api/v1alpha1/analysis.ts';
import { API_VERSION } from '../api/v1alpha1/transaction.ts';
import { isNotFound } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';
import { type AnalysisPolicy, templateNamespaceRefusal } from './policy.ts';
import { AnalysisTemplateError, checksOf, templateName } from './templates.ts';

interface AnalysisTemplate extends KubeObject {
  spec: AnalysisTemplateSpec;
}

/** The checks of one analysis item: its inline check, or its template's with the args filled. */
export async function resolveChecks(
  ref: AnalysisRef,
  transactionNamespace: string,
  objects: Objects,
  policy: AnalysisPolicy,
): Promise<AnalysisCheck[]> {
  if (!ref.templateRef) return checksOf(ref, undefined, transactionNamespace);
  const refusal = templateNamespaceRefusal(ref, transactionNamespace, policy);
  if (refusal) throw new AnalysisTemplateError(refusal);
  const namespace = ref.templateRef.namespace ?? transactionNamespace;
  try {
    const template = await objects.get<AnalysisTemplate>({
      apiVersion: API_VERSION,
      kind: TEMPLATE_KIND,
      namespace,
      name: ref.templateRef.name,
    });
    return checksOf(ref, template.spec, transactionNamespace);
  } catch (e) {
    if (isNotFound(e))
      throw new AnalysisTemplateError(`${templateName(ref, transactionNamespace)} does not exist`);
    throw e;
  }
}
