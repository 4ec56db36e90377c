/**
 * InstanceClaim (tx.janus.io/v1alpha1, cluster-scoped): an installation's claim on its instance,
 * for all namespaces or the one it watches (src/controller/instance-claim.ts). Two installations
 * of one instance in different namespaces would both drive the same Transactions, each under a
 * leader Lease of its own namespace; a cluster-scoped object is where the second finds the first.
 * Written only by the controllers (their ClusterRole) and cluster administrators.
 */
import { type Infer, integer, object, string, timestamp } from '../schema.ts';
import { janusCrd } from './crd-envelope.ts';
import { DNS_LABEL } from './patterns.ts';

export const CLAIM_KIND = 'InstanceClaim';
export const CLAIM_PLURAL = 'instanceclaims';
export const CLAIM_SINGULAR = 'instanceclaim';

export const instanceClaimSpecSchema = object(
  {
    controllerNamespace: string({
      description: 'The namespace of the installation that holds the claim (its controller namespace).',
      maxLength: 63,
      pattern: DNS_LABEL,
    }),
    instance: string({
      description: 'The instance claimed (--instance); absent: the default installation.',
      maxLength: 63,
      pattern: DNS_LABEL,
    }),
    watchNamespace: string({
      description: 'The one namespace the installation watches (--namespace); absent: every namespace.',
      maxLength: 63,
      pattern: DNS_LABEL,
    }),
    holderIdentity: string({ description: 'The process that renewed it last (its pod).', maxLength: 253 }),
    acquireTime: timestamp({ description: 'When this installation took the claim.' }),
    renewTime: timestamp({ description: 'When it was renewed last.' }),
    leaseDurationSeconds: integer({
      minimum: 1,
      maximum: 3600,
      description: 'Not renewed for this long, the claim is free: its installation is gone.',
    }),
  },
  { required: ['controllerNamespace', 'holderIdentity', 'acquireTime', 'renewTime', 'leaseDurationSeconds'] },
);

export type InstanceClaimSpec = Infer<typeof instanceClaimSpecSchema>;

export function instanceClaimCrd() {
  return janusCrd({
    kind: CLAIM_KIND,
    plural: CLAIM_PLURAL,
    singular: CLAIM_SINGULAR,
    scope: 'Cluster',
    description:
      'An InstanceClaim says which installation of Janus serves an instance (for every namespace, or the one it watches): another installation of that instance, in another namespace, refuses to start while the claim is renewed.',
    spec: instanceClaimSpecSchema.openApi,
    columns: [
      { name: 'Installation', type: 'string', jsonPath: '.spec.controllerNamespace' },
      { name: 'Instance', type: 'string', jsonPath: '.spec.instance' },
      { name: 'Watching', type: 'string', jsonPath: '.spec.watchNamespace' },
      { name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity', priority: 1 },
      { name: 'Renewed', type: 'date', jsonPath: '.spec.renewTime' },
    ],
  });
}
