import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { holdParsed, holdTransaction, releaseTransaction } from '../../../src/gitops/held-transaction.ts';
import { parseFiles as parse } from './diagnose.ts';

const TRANSACTION_FILE = `apiVersion: tx.janus.io/v1alpha1
kind: Transaction
metadata:
  name: deploy-v2
  labels: {team: web}
spec:
  serviceAccountName: deploy-sa
`;

// What YAML can say that JSON spells differently or not at all: the API server receives JSON, so
// a held Transaction must come back as the request body the parsed one would have made.
const CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, annotations: {note: "ünïcødé ✓ 🚀"}}
data:
  empty: ""
  multiline: |
    line one
    line two
binaryData:
  blob: aGVsbG8=
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  paused: false
  progressDeadlineSeconds: 600
  template:
    spec:
      containers: [{name: web, image: "web:1.2", args: ["--rate", "0.5"], resources: {limits: {cpu: 1.5}}}]
      nodeSelector: null
`;

describe('a Transaction held while a poll waits to create it', () => {
  it('comes back as the request body the parsed one makes, metadata readable meanwhile', async () => {
    const parsed = await parse({
      'transaction.yaml': TRANSACTION_FILE,
      '10-settings.create.yaml': CONFIG_MAP,
      '20-web.patch.yaml': DEPLOYMENT,
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const held = holdParsed(parsed);
    expect(held.ok).toBe(true);
    if (!held.ok) return;
    expect(held.transaction.metadata).toEqual(parsed.transaction.metadata);
    expect(held.transaction).not.toHaveProperty('spec');
    const released = releaseTransaction(held.transaction);
    expect(JSON.stringify(released)).toBe(JSON.stringify(parsed.transaction));
    expect(released.spec.changes).toHaveLength(2);
  });

  it('holds the spec as its JSON deflated, in a block of its own size', async () => {
    const parsed = await parse({
      'transaction.yaml': TRANSACTION_FILE,
      '10-settings.create.yaml': CONFIG_MAP,
      '20-web.patch.yaml': DEPLOYMENT,
    });
    if (!parsed.ok) throw new Error('expected a valid directory');
    const held = holdTransaction(parsed.transaction);
    expect(held.heldSpec).toBeInstanceOf(Uint8Array);
    // Nothing else kept alive, nothing else copied by a structured clone.
    expect(held.heldSpec.buffer.byteLength).toBe(held.heldSpec.byteLength);
    const json = JSON.stringify(parsed.transaction.spec);
    expect(held.heldSpec.byteLength).toBeLessThan(json.length);
    expect(inflateRawSync(held.heldSpec).toString('utf8')).toBe(json);
  });

  it('comes back the same after a structured clone (the parse thread sends it so)', async () => {
    const parsed = await parse({ 'transaction.yaml': TRANSACTION_FILE, '20-web.patch.yaml': DEPLOYMENT });
    if (!parsed.ok) throw new Error('expected a valid directory');
    const cloned = structuredClone(holdTransaction(parsed.transaction));
    expect(JSON.stringify(releaseTransaction(cloned))).toBe(JSON.stringify(parsed.transaction));
  });

  it('leaves a directory that did not parse as it is', async () => {
    const parsed = await parse({ 'transaction.yaml': 'kind: [' });
    expect(parsed.ok).toBe(false);
    expect(holdParsed(parsed)).toBe(parsed);
  });
});
