/**
 * What `janus plan` makes of one source of a pull request: nothing when its render does not
 * change, else the transaction the merge would make (the controller's changesForRender and
 * sourceTransaction), or the head's failure, refusal or rejection.
 */

import { generateIdentity, identityToRecipient } from 'age-encryption';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_PRUNE, PRUNE_DISABLED } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import type { SourceDeclaration } from '../../../src/sources/declaration.ts';
import { identityKey, identityOf, inventoryEntry, renderDigest } from '../../../src/sources/inventory.ts';
import type { SourceRender } from '../../../src/sources/render-source.ts';
import type { Sealed } from '../../../src/sources/sealed-objects.ts';
import {
  decideSourcePlan,
  inventoryToCompare,
  type SourcePlanInput,
  type SourceSide,
  sealedSourcePlan,
} from '../../../src/sources/source-plan.ts';
import { MAX_TRANSACTION_BYTES } from '../../../src/sources/source-transaction.ts';

const KEY = 'the plan key';
const HEAD = 'b'.repeat(40);
const cm = (name: string, data: Record<string, string> = {}, annotations?: Record<string, string>) =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'shop', ...(annotations && { annotations }) },
    data,
  }) as KubeObject;
const deployment = (image: string) =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { template: { spec: { containers: [{ name: 'app', image }] } } },
  }) as KubeObject;

const declaration = (prune = true): SourceDeclaration => ({
  file: 'sources/web.yaml',
  name: 'web',
  namespace: 'shop',
  spec: { path: 'deploy/prod', kustomize: {}, serviceAccountName: 'deployer', prune },
});
const rendered = (objects: KubeObject[], sealed?: Sealed): SourceRender => {
  const entries = objects.map((o) => inventoryEntry(o, KEY));
  return { kind: 'rendered', objects, entries, digest: renderDigest(entries, KEY), bytes: 100, sealed };
};
const declared = (render: SourceRender, prune = true): SourceSide => ({
  kind: 'declared',
  declaration: declaration(prune),
  render,
});
const input = (base: SourceSide, head: SourceSide, more: Partial<SourcePlanInput> = {}): SourcePlanInput => ({
  base,
  head,
  headCommit: HEAD,
  digestKey: KEY,
  repository: 'https://git.example/shop.git',
  branch: 'main',
  ...more,
});
const ABSENT: SourceSide = { kind: 'absent' };

describe('decideSourcePlan', () => {
  it('plans nothing when the head renders what the base renders, whatever else the pull request changes', () => {
    const objects = [cm('settings', { a: '1' }), deployment('web:1')];
    expect(decideSourcePlan(input(declared(rendered(objects)), declared(rendered([...objects]))))).toEqual({
      verdict: 'unchanged',
    });
    expect(decideSourcePlan(input(ABSENT, ABSENT)).verdict).toBe('unchanged');
  });

  it('plans an image change and a removed object as one transaction: an Apply and a prune, named after the head', () => {
    const base = declared(rendered([cm('settings', { a: '1' }), cm('old'), deployment('web:1')]));
    const head = declared(rendered([cm('settings', { a: '1' }), deployment('web:2')]));
    const decision = decideSourcePlan(input(base, head));
    if (decision.verdict !== 'transaction') throw new Error(decision.verdict);
    const txn = decision.transaction;
    expect(txn.metadata).toMatchObject({ name: 'web-bbbbbbb', namespace: 'shop' });
    expect(txn.spec.sourceRef).toEqual({ name: 'web' });
    expect(txn.spec.serviceAccountName).toBe('deployer');
    expect(txn.spec.changes.map((c) => `${c.type} ${c.target.kind} ${c.target.name}`)).toEqual([
      'Apply Deployment web',
      'Delete ConfigMap old',
    ]);
    expect(decision.left).toEqual([]);
  });

  it('leaves what the source may not prune, and says why', () => {
    const keep = cm('keep', {}, { [ANNOTATION_PRUNE]: PRUNE_DISABLED });
    const base = declared(rendered([keep, deployment('web:1')]));
    const head = declared(rendered([deployment('web:2')]));
    const decision = decideSourcePlan(input(base, head));
    if (decision.verdict !== 'transaction') throw new Error(decision.verdict);
    expect(decision.transaction.spec.changes.map((c) => c.type)).toEqual(['Apply']);
    expect(decision.left).toEqual([
      expect.stringMatching(/^v1 ConfigMap shop\/keep is left in the cluster: /),
    ]);
    const off = decideSourcePlan(
      input(
        declared(rendered([cm('old'), deployment('web:1')]), false),
        declared(rendered([deployment('web:1')]), false),
      ),
    );
    expect(off).toEqual({
      verdict: 'no-transaction',
      left: [expect.stringContaining('spec.prune is false')],
    });
  });

  it('prunes against the Source in the cluster when there is one: what it holds, not what the base renders', () => {
    // The base renders "new" too, but the source's last commit never applied it: the merge creates it.
    const base = declared(rendered([cm('new'), deployment('web:1')]));
    const head = declared(rendered([cm('new'), deployment('web:2')]));
    const cluster = [
      inventoryEntry(cm('gone'), 'the controller key'),
      inventoryEntry(deployment('web:1'), 'the controller key'),
    ];
    const decision = decideSourcePlan(input(base, head, { clusterInventory: cluster }));
    if (decision.verdict !== 'transaction') throw new Error(decision.verdict);
    expect(
      decision.transaction.spec.changes.map((c) => `${c.type} ${c.target.kind} ${c.target.name}`),
    ).toEqual(['Apply ConfigMap new', 'Apply Deployment web', 'Delete ConfigMap gone']);
  });

  it('compares with the inventory by identity, the base giving the digests', () => {
    const base = [inventoryEntry(cm('a'), KEY), inventoryEntry(cm('b'), KEY)];
    const cluster = [
      { ...inventoryEntry(cm('a'), 'other'), pruneDisabled: true },
      inventoryEntry(cm('c'), 'other'),
    ];
    expect(inventoryToCompare(base, cluster)).toEqual([
      { ...base[0], pruneDisabled: true },
      { ...inventoryEntry(cm('c'), 'other'), digest: '' },
    ]);
    expect(inventoryToCompare(base, undefined)).toEqual(base);
  });

  it('creates every object of a source new in the pull request', () => {
    const decision = decideSourcePlan(
      input(ABSENT, declared(rendered([cm('settings'), deployment('web:1')]))),
    );
    if (decision.verdict !== 'transaction') throw new Error(decision.verdict);
    expect(decision.transaction.spec.changes.map((c) => c.type)).toEqual(['Apply', 'Apply']);
  });

  it('says a removed declaration deletes the Source and leaves its objects', () => {
    expect(decideSourcePlan(input(declared(rendered([cm('a')])), ABSENT))).toEqual({ verdict: 'removed' });
  });

  it("reports the head's render failure with the tool's file and line, and its refusals naming each object", () => {
    const failed: SourceRender = {
      kind: 'failed',
      failure: { tool: 'kustomize', file: 'deploy/prod/kustomization.yaml', line: 7, message: 'bad patch' },
    };
    expect(decideSourcePlan(input(declared(rendered([cm('a')])), declared(failed)))).toEqual({
      verdict: 'render-failed',
      problems: ['deploy/prod/kustomization.yaml:7: kustomize: bad patch'],
    });
    // The same failure at both sides: the pull request does not change it.
    expect(decideSourcePlan(input(declared(failed), declared(failed))).verdict).toBe('unchanged');
    const refused: SourceRender = {
      kind: 'refused',
      refusals: [
        {
          object: 'v1 ConfigMap kube-public/x',
          rule: 'namespace',
          message: 'v1 ConfigMap kube-public/x: no',
        },
      ],
      more: 2,
    };
    expect(decideSourcePlan(input(declared(rendered([cm('a')])), declared(refused)))).toEqual({
      verdict: 'refused',
      problems: ['v1 ConfigMap kube-public/x: no', '… and 2 more objects refused'],
    });
  });

  it('reports a rejected declaration at the head with its diagnostics', () => {
    const rejected: SourceSide = {
      kind: 'rejected',
      file: 'sources/web.yaml',
      diagnostics: [
        { code: 'invalid-value', file: 'sources/web.yaml', line: 3, column: 2, message: 'wrong' },
      ],
    };
    expect(decideSourcePlan(input(declared(rendered([cm('a')])), rejected))).toEqual({
      verdict: 'rejected',
      problems: ['sources/web.yaml:3:2: wrong'],
    });
  });

  it('refuses what the controller refuses: an object twice', () => {
    const decision = decideSourcePlan(input(ABSENT, declared(rendered([cm('a'), cm('a', { x: '1' })]))));
    expect(decision).toEqual({ verdict: 'refused', problems: [expect.stringContaining('twice')] });
  });

  it('plans a source whose keys the plan may not read when its files, rendered encrypted, change; not when they do not', () => {
    const noKey: SourceRender = {
      kind: 'failed',
      failure: {
        tool: 'janus',
        file: 'deploy/app/app.env',
        message: 'deploy/app/app.env is SOPS-encrypted, and …',
      },
    };
    const side = (encrypted: string): SourceSide => ({
      ...(declared(noKey) as Extract<SourceSide, { kind: 'declared' }>),
      undecrypted: rendered([cm('app-env', { API_TOKEN: encrypted })]),
    });
    expect(decideSourcePlan(input(side('ENC[one]'), side('ENC[two]')))).toEqual({
      verdict: 'render-failed',
      problems: ['deploy/app/app.env: janus: deploy/app/app.env is SOPS-encrypted, and …'],
    });
    expect(decideSourcePlan(input(side('ENC[one]'), side('ENC[one]'))).verdict).toBe('unchanged');
  });
});

describe('sealedSourcePlan', () => {
  const secret = (token: string): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-env', namespace: 'shop' },
      data: { API_TOKEN: Buffer.from(token).toString('base64') },
    }) as KubeObject;

  it("keeps the render's Secrets encrypted to the files' recipients, as janus run creates its Transaction", async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    const objects = [secret('token-two'), cm('settings', { a: '1' })];
    const sealed: Sealed = {
      recipients: [recipient],
      objects: new Set([identityKey(identityOf(objects[0] as KubeObject))]),
    };
    const decision = await sealedSourcePlan(
      decideSourcePlan(input(ABSENT, declared(rendered(objects, sealed)))),
      sealed,
    );
    if (decision.verdict !== 'transaction') throw new Error(decision.verdict);
    const [app, settings] = decision.transaction.spec.changes;
    expect(app?.content).toBeUndefined();
    expect(app?.sopsContent).toContain(recipient);
    expect(app?.sopsContent).not.toContain(Buffer.from('token-two').toString('base64'));
    expect(settings?.content).toMatchObject({ data: { a: '1' } });
    // Nothing to seal, or no transaction: the decision as it was.
    const plain = decideSourcePlan(input(ABSENT, declared(rendered([cm('settings')]))));
    expect(await sealedSourcePlan(plain, undefined)).toBe(plain);
  });

  it('refuses a Transaction that only encrypted goes over the size one API object may take', async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    // In clear under the bound; encrypted (base64 of the base64, sops's envelope) over it.
    const big = secret('x'.repeat(Math.floor(MAX_TRANSACTION_BYTES * 0.7)));
    const sealed = { recipients: [recipient], objects: new Set([identityKey(identityOf(big))]) };
    const clear = decideSourcePlan(input(ABSENT, declared(rendered([big], sealed))));
    expect(clear.verdict).toBe('transaction');
    expect(await sealedSourcePlan(clear, sealed)).toEqual({
      verdict: 'refused',
      problems: [expect.stringMatching(/^its Transaction would be \d+ bytes, more than the 1048576 /)],
    });
  });
});
