import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import {
  comparable,
  diffObjects,
  maskContent,
  maskSecrets,
  toYaml,
} from '../../../src/yaml/manifest-diff.ts';

const labels = { from: 'current', to: 'planned' };

function configMap(data: Record<string, string>, meta: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'shop', ...meta }, data };
}

const secret = (data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'shop' },
  type: 'Opaque',
  data,
});

describe('comparable', () => {
  it('drops server-set metadata and status, and keeps what a person wrote', () => {
    const obj = configMap(
      { a: '1' },
      {
        resourceVersion: '7',
        uid: 'u',
        generation: 3,
        creationTimestamp: 't',
        managedFields: [{}],
        labels: { x: 'y' },
      },
    );
    const out = comparable({ ...obj, status: { ready: true } });
    expect(out.metadata).toEqual({ name: 'app', namespace: 'shop', labels: { x: 'y' } });
    expect(out).not.toHaveProperty('status');
    expect(obj.metadata.resourceVersion).toBe('7'); // the input is not modified
  });
});

describe('diffObjects', () => {
  it('ignores differences only in server-set metadata', () => {
    const before = configMap({ a: '1' }, { resourceVersion: '1', managedFields: [{ manager: 'x' }] });
    const after = configMap({ a: '1' }, { resourceVersion: '2', managedFields: [{ manager: 'janus-x' }] });
    expect(diffObjects(before, after, labels)).toBe('');
  });

  it('shows a changed value as a removed and an added YAML line, keys sorted', () => {
    const diff = diffObjects(configMap({ b: '1', a: 'old' }), configMap({ a: 'new', b: '1' }), labels);
    expect(diff).toContain('-  a: old\n+  a: new\n');
    expect(diff.indexOf('  a: ')).toBeLessThan(diff.indexOf('  b: '));
  });

  it('shows a created object as all added lines', () => {
    const diff = diffObjects(undefined, configMap({ a: '1' }), labels);
    expect(diff).toMatch(/^--- current\n\+\+\+ planned\n@@ -0,0 \+1,\d+ @@\n/);
    expect(diff.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---'))).toEqual([]);
  });
});

describe('maskSecrets', () => {
  it('never shows a Secret value, nor which value changed: only which keys appeared or went', () => {
    const before = secret({ same: 'c2FtZQ==', changed: 'b2xk', gone: 'Z29uZQ==' });
    const after = secret({ same: 'c2FtZQ==', changed: 'bmV3', added: 'YWRkZWQ=' });
    const diff = diffObjects(before, after, labels);
    for (const value of ['c2FtZQ==', 'b2xk', 'bmV3', 'Z29uZQ==', 'YWRkZWQ='])
      expect(diff).not.toContain(value);
    const changed = diff.split('\n').filter((l) => /^[-+] /.test(l));
    expect(changed.sort()).toEqual(['+  added: "***"', '-  gone: "***"']);
    expect(diff).not.toMatch(/before\)|after\)/);
  });

  it('gives the same diff whether a value changed or not: no answer to a guessed value', () => {
    const live = secret({ password: 'c2VjcmV0' });
    expect(diffObjects(live, secret({ password: 'Z3Vlc3M=' }), labels)).toBe('');
    expect(diffObjects(live, secret({ password: 'c2VjcmV0' }), labels)).toBe('');
  });

  it('masks stringData too, and leaves other kinds alone', () => {
    const [masked] = maskSecrets({ ...secret({}), stringData: { token: 'plain' } }, undefined);
    expect(masked?.stringData).toEqual({ token: '***' });
    const cm = configMap({ token: 'visible' });
    expect(maskSecrets(cm, cm)[0]).toBe(cm);
  });
});

describe('the values of secret content', () => {
  const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

  it("masks a Secret's last-applied-configuration annotation, which kubectl apply fills with its values", () => {
    const applied = (token: string) => ({
      ...secret({ token }),
      metadata: {
        name: 's',
        namespace: 'shop',
        annotations: { [LAST_APPLIED]: JSON.stringify({ data: { token } }), team: 'shop' },
      },
    });
    const [masked] = maskSecrets(applied('b2xkLXRva2Vu'), undefined);
    expect(masked?.metadata.annotations).toEqual({ [LAST_APPLIED]: '***', team: 'shop' });
    expect(diffObjects(applied('b2xkLXRva2Vu'), applied('bmV3LXRva2Vu'), labels)).toBe('');
    const diff = diffObjects(undefined, applied('bmV3LXRva2Vu'), labels);
    expect(diff).not.toContain('bmV3LXRva2Vu');
    expect(diff).toContain(`+    ${LAST_APPLIED}: "***"`);
  });

  it('masks every value of another kind but its identity, leaf by leaf, keys shown, changes not', () => {
    const db = (password: string, replicas: number, extra?: Record<string, unknown>): KubeObject => ({
      apiVersion: 'db.example.com/v1',
      kind: 'Database',
      metadata: { name: 'orders', namespace: 'shop', labels: { app: 'orders' } },
      spec: { auth: { password, users: ['alice-secret-user'] }, replicas, ...extra },
    });
    const [before, after] = maskContent(
      db('old-password', 2),
      db('new-password', 2, { tls: { key: 'k3y' } }),
    );
    expect(before?.metadata).toEqual(db('', 0).metadata);
    expect(before?.spec).toEqual({ auth: { password: '***', users: ['***'] }, replicas: '***' });
    expect(after?.spec).toEqual({
      auth: { password: '***', users: ['***'] },
      replicas: '***',
      tls: { key: '***' },
    });
    const diff = diffObjects(db('old-password', 2), db('new-password', 3, { tls: {} }), labels, {
      maskContent: true,
    });
    expect(diff).not.toMatch(/old-password|new-password|alice-secret-user/);
    expect(diff.split('\n').filter((l) => /^[-+] /.test(l))).toEqual(['+  tls: {}']);
    expect(diffObjects(db('a', 1), db('b', 2), labels, { maskContent: true })).toBe('');
    // A Secret is masked as maskSecrets masks it: its type stays readable.
    expect(maskContent(secret({ a: 'YQ==' }), undefined)[0]).toMatchObject({
      type: 'Opaque',
      data: { a: '***' },
    });
  });
});

describe('toYaml', () => {
  it('quotes strings that YAML 1.1 (kubectl) would read as booleans or numbers', () => {
    const text = toYaml(configMap({ flag: 'off', answer: 'yes', port: '08' }));
    expect(text).toContain('flag: "off"');
    expect(text).toContain('answer: "yes"');
    expect(text).toContain('port: "08"');
  });
});
