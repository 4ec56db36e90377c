/**
 * What a tenant's analysis may make the shared controller do: query only the addresses the
 * platform team allowed, and use templates only of its own namespace or of those the platform
 * team listed. Each refusal names the setting that decides it.
 */
import { describe, expect, it } from 'vitest';
import { parseAllowedAddresses } from '../../../src/analysis/allowed-addresses.ts';
import {
  type AnalysisPolicy,
  analysisRefusal,
  checkAddressRefusal,
  templateNamespaceRefusal,
} from '../../../src/analysis/policy.ts';
import type { AnalysisCheck, AnalysisRef } from '../../../src/api/v1alpha1/analysis.ts';

const policy = (addresses: string, templateNamespaces: string[] = ['janus-system']): AnalysisPolicy => ({
  allowedAddresses: parseAllowedAddresses(addresses),
  templateNamespaces,
});

const prometheusCheck = (address: string): AnalysisCheck => ({
  name: 'error-ratio',
  prometheus: { address, query: 'sum(up)', failWhen: 'result < 1' },
});
const httpCheck = (url: string): AnalysisCheck => ({ name: 'web-up', http: { url } });

describe('templateNamespaceRefusal', () => {
  it("allows the Transaction's own namespace, named or not", () => {
    const p = policy('');
    expect(templateNamespaceRefusal({ templateRef: { name: 't' } }, 'shop', p)).toBeUndefined();
    expect(
      templateNamespaceRefusal({ templateRef: { name: 't', namespace: 'shop' } }, 'shop', p),
    ).toBeUndefined();
  });

  it('allows the namespaces the platform team listed (by default the controller’s)', () => {
    const p = policy('', ['janus-system', 'platform-analysis']);
    for (const namespace of ['janus-system', 'platform-analysis']) {
      expect(templateNamespaceRefusal({ templateRef: { name: 't', namespace } }, 'shop', p)).toBeUndefined();
    }
  });

  it("refuses another tenant's namespace, naming the template and the setting", () => {
    const refusal = templateNamespaceRefusal(
      { templateRef: { name: 'payments-errors', namespace: 'payments' } },
      'shop',
      policy(''),
    );
    expect(refusal).toContain('AnalysisTemplate "payments/payments-errors"');
    expect(refusal).toContain('"shop"');
    expect(refusal).toContain('janus-system');
    expect(refusal).toContain('--analysis-template-namespaces');
    expect(refusal).toContain('JANUS_ANALYSIS_TEMPLATE_NAMESPACES');
  });

  it('has nothing to say of an inline check', () => {
    expect(templateNamespaceRefusal({ check: httpCheck('http://x') }, 'shop', policy(''))).toBeUndefined();
  });
});

describe('checkAddressRefusal', () => {
  it('refuses any address when none is allowed, naming it and the setting', () => {
    const refusal = checkAddressRefusal(
      httpCheck('http://169.254.169.254/latest/meta-data/'),
      policy(''),
      'shop',
    );
    expect(refusal).toContain('check "web-up"');
    expect(refusal).toContain('http://169.254.169.254/latest/meta-data/');
    expect(refusal).toContain('--analysis-allowed-addresses');
    expect(refusal).toContain('JANUS_ANALYSIS_ALLOWED_ADDRESSES');
    expect(refusal).toContain('none is allowed');
  });

  it("matches a Prometheus check on the query URL it would GET, under the address's path", () => {
    const p = policy('http://gw.example/prometheus');
    expect(checkAddressRefusal(prometheusCheck('http://gw.example/prometheus'), p, 'shop')).toBeUndefined();
    expect(checkAddressRefusal(prometheusCheck('http://gw.example/prometheus/'), p, 'shop')).toBeUndefined();
    expect(checkAddressRefusal(prometheusCheck('http://gw.example/other'), p, 'shop')).toContain(
      'http://gw.example/other',
    );
    expect(checkAddressRefusal(prometheusCheck('http://gw.example/prometheus/..'), p, 'shop')).toBeDefined();
  });

  it('allows an HTTP check whose URL is allowed, and says which addresses are when it is not', () => {
    const p = policy('http://web.shop');
    expect(checkAddressRefusal(httpCheck('http://web.shop/healthz'), p, 'shop')).toBeUndefined();
    const refusal = checkAddressRefusal(httpCheck('http://kubernetes.default.svc/api'), p, 'shop');
    expect(refusal).toContain('http://kubernetes.default.svc/api');
    expect(refusal).toContain('allowed: http://web.shop');
  });

  it('allows an address listed for some namespaces only to those, and names only their own', () => {
    const p = policy('team-a=http://prom-a:9090, team-b-*=http://prom-b:9090, http://thanos:9090');
    const prom = (address: string, namespace: string) =>
      checkAddressRefusal(prometheusCheck(address), p, namespace);
    expect(prom('http://prom-a:9090', 'team-a')).toBeUndefined();
    expect(prom('http://prom-b:9090', 'team-b-web')).toBeUndefined();
    expect(prom('http://thanos:9090', 'anyone')).toBeUndefined();
    const refused = prom('http://prom-b:9090', 'team-a');
    expect(refused).toContain('the controller does not query http://prom-b:9090/:');
    expect(refused).toContain('for namespace "team-a"');
    expect(refused).toContain('allowed: http://prom-a:9090, http://thanos:9090)');
    // team-b-* does not match team-b, nor team-a's entry team-ab.
    expect(prom('http://prom-b:9090', 'team-b')).toBeDefined();
    expect(prom('http://prom-a:9090', 'team-ab')).toBeDefined();
  });

  it('never shows credentials or a query string of the refused URL', () => {
    const refusal = checkAddressRefusal(
      httpCheck('http://u:secret@evil.example/x?token=abc'),
      policy(''),
      'shop',
    );
    expect(refusal).not.toContain('secret');
    expect(refusal).not.toContain('abc');
  });
});

describe('analysisRefusal (what prepare can tell before anything changes)', () => {
  const refs = (...items: AnalysisRef[]) => items;

  it('allows what the settings allow', () => {
    const p = policy('http://prom:9090');
    expect(
      analysisRefusal(
        refs(
          { templateRef: { name: 't', namespace: 'janus-system' } },
          { check: prometheusCheck('http://prom:9090') },
        ),
        'shop',
        p,
      ),
    ).toBeUndefined();
  });

  it('refuses an inline check whose address is not allowed, and a template of a namespace not allowed', () => {
    const p = policy('http://prom:9090');
    expect(analysisRefusal(refs({ check: httpCheck('http://10.0.0.1:10250/pods') }), 'shop', p)).toContain(
      'http://10.0.0.1:10250/pods',
    );
    expect(analysisRefusal(refs({ templateRef: { name: 't', namespace: 'payments' } }), 'shop', p)).toContain(
      'AnalysisTemplate "payments/t"',
    );
  });

  it('leaves a template’s addresses to the window: they are known only once it is read', () => {
    expect(analysisRefusal(refs({ templateRef: { name: 't' } }), 'shop', policy(''))).toBeUndefined();
  });
});
