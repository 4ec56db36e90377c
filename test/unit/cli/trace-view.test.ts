import { describe, expect, it } from 'vitest';
import { renderTrace, traceReport } from '../../../src/cli/trace-view.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { txn } from './fixtures.ts';

const stamped = (kind: string, apiVersion: string, name: string, stamp: string, namespace = 'shop') =>
  ({
    apiVersion,
    kind,
    metadata: { name, namespace, annotations: { 'tx.janus.io/applied-by': stamp } },
  }) as KubeObject;

describe('janus trace believes a stamp only on an object its change targets', () => {
  const release = txn({ phase: 'Committed' }); // change 1: Patch apps/v1 Deployment web

  it('traces the object the named change targets', () => {
    const web = stamped('Deployment', 'apps/v1', 'web', 'shop/deploy-v2@uid-1#1');
    const report = traceReport(web, release);
    expect(report.untrusted).toBeUndefined();
    expect(report.appliedBy).toMatchObject({ found: true, change: 1, changeType: 'Patch' });
  });

  it('refuses a forged stamp on an object the named change does not target', () => {
    // Someone who may write ConfigMaps copied the Deployment's stamp onto their own object.
    const forged = stamped('ConfigMap', 'v1', 'planted', 'shop/deploy-v2@uid-1#1');
    const report = traceReport(forged, release);
    expect(report.appliedBy).toBeUndefined();
    expect(report.untrusted).toContain(
      'names change 1 of Transaction shop/deploy-v2, which targets Deployment web',
    );
    expect(renderTrace(report)).toMatch(/^ConfigMap shop\/planted is not traced: /);
  });

  it('tells the same name in another namespace, another group or a missing change apart', () => {
    const untrusted = (o: KubeObject) => traceReport(o, release).untrusted;
    const stamp = 'shop/deploy-v2@uid-1#1';
    expect(untrusted(stamped('Deployment', 'apps/v1', 'web', stamp, 'other'))).toBeDefined();
    expect(untrusted(stamped('Deployment', 'example.com/v1', 'web', stamp))).toBeDefined();
    expect(untrusted(stamped('Deployment', 'apps/v1', 'web', 'shop/deploy-v2@uid-1#9'))).toContain(
      'has no such change',
    );
  });

  it('reports a stamp whose Transaction is gone as one that cannot be checked, not as a trace', () => {
    // Anyone who may write the object could have written a stamp naming a pruned Transaction.
    const web = stamped('Deployment', 'apps/v1', 'web', 'shop/deploy-v2@uid-1#1');
    const report = traceReport(web, undefined);
    expect(report.unverified).toBe(
      'Transaction shop/deploy-v2 (uid uid-1), which no longer exists; nothing confirms that Janus wrote it',
    );
    expect(report.appliedBy).toMatchObject({ found: false, resultFile: 'results/shop/deploy-v2.yaml' });
    expect(renderTrace(report)).toBe(
      'Deployment shop/web is not traced: its tx.janus.io/applied-by annotation names change 1 of ' +
        'Transaction shop/deploy-v2 (uid uid-1), which no longer exists; nothing confirms that Janus wrote it. ' +
        'If Janus wrote it, the outcome is on the results branch: results/shop/deploy-v2.yaml ' +
        '(its transaction.uid must be uid-1).\n',
    );
  });

  it('reports a stamp naming another uid than the live Transaction of that name the same way', () => {
    const web = stamped('Deployment', 'apps/v1', 'web', 'shop/deploy-v2@uid-old#1');
    const report = traceReport(web, release);
    expect(report.unverified).toContain('which now has uid uid-1: another Transaction of that name');
    expect(report.appliedBy).toMatchObject({ found: false });
    expect(report.appliedBy).not.toHaveProperty('phase');
  });

  it('prints no control character of the stamp', () => {
    const report = traceReport(
      stamped('ConfigMap', 'v1', 'x', 'shop/\u001b]0;pwned\u0007@uid-9#0'),
      undefined,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
    expect(renderTrace(report)).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });
});

describe("janus trace of an object a source's transaction wrote", () => {
  it('names the Source and the commit it applied', () => {
    const base = txn({ phase: 'Committed' });
    const release = {
      ...base,
      spec: { ...base.spec, sourceRef: { name: 'web' } },
      status: {
        ...base.status,
        source: {
          repository: 'https://git.example/shop.git',
          path: 'sources/web.yaml',
          revision: `main@sha1:${'9b8e7d6'.padEnd(40, '1')}`,
        },
      },
    };
    const web = stamped('Deployment', 'apps/v1', 'web', 'shop/deploy-v2@uid-1#1');
    const report = traceReport(web, release);
    expect(report.appliedBy).toMatchObject({ sourceName: 'web' });
    expect(renderTrace(report)).toMatch(/applies:\s+commit 9b8e7d6 of Source shop\/web\n/);
  });
});
