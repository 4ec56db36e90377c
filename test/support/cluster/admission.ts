/**
 * A ValidatingAdmissionPolicy that refuses real writes of one named object while allowing dry
 * runs: a change that passes prepare and then fails at commit, deterministically.
 */
import type { Objects } from '../../../src/kube/resources.ts';
import { eventually } from '../eventually.ts';

export async function failAtCommit(
  admin: Objects,
  namespace: string,
  objectName: string,
  /** Namespaces the policy applies to; default: `namespace` only. */
  namespaceSelector: { matchLabels: Record<string, string> } = {
    matchLabels: { 'kubernetes.io/metadata.name': namespace },
  },
): Promise<() => Promise<void>> {
  const name = `fail-at-commit-${namespace}`;
  await admin.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['configmaps'],
          },
        ],
      },
      validations: [
        {
          expression: `request.dryRun == true || !has(request.name) || request.name != '${objectName}'`,
          message: `${objectName} may not be written (test policy ${name})`,
        },
      ],
    },
  });
  await admin.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector },
    },
  });
  // The policy takes effect asynchronously: wait until a real write in `namespace` is refused.
  await eventually(async () => {
    const probe = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: objectName, namespace } };
    try {
      await admin.create(probe);
    } catch (e) {
      if (String(e).includes('may not be written')) return;
      throw e;
    }
    // Deletes are not refused, so the probe never stays behind.
    await admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: objectName, namespace });
    throw new Error('policy not active yet');
  });
  return async () => {
    await admin.delete({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      name,
    });
    await admin.delete({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      name,
    });
  };
}
