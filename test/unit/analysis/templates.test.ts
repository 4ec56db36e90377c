import { describe, expect, it } from 'vitest';
import { parseFailWhen } from '../../../src/analysis/fail-when.ts';
import { checksOf } from '../../../src/analysis/templates.ts';
import { type AnalysisTemplateSpec, analysisCheckSchema } from '../../../src/api/v1alpha1/analysis.ts';

const template: AnalysisTemplateSpec = {
  args: [{ name: 'service' }, { name: 'threshold-window', value: '1m' }],
  checks: [
    {
      name: 'error-ratio',
      prometheus: {
        address: 'http://prometheus.monitoring:9090',
        query:
          'sum(rate(http_requests_total{service="{{args.service}}",code=~"5.."}[{{ args.threshold-window }}]))',
        failWhen: 'result > 0.05',
      },
    },
  ],
};

describe('checksOf', () => {
  it('fills the arguments, the template default where the reference gives none', () => {
    const [check] = checksOf(
      { templateRef: { name: 'errors' }, args: [{ name: 'service', value: 'web' }] },
      template,
      'shop',
    );
    expect(check?.prometheus?.query).toBe('sum(rate(http_requests_total{service="web",code=~"5.."}[1m]))');
  });

  it('lets the reference override a default', () => {
    const [check] = checksOf(
      {
        templateRef: { name: 'errors' },
        args: [
          { name: 'service', value: 'web' },
          { name: 'threshold-window', value: '5m' },
        ],
      },
      template,
      'shop',
    );
    expect(check?.prometheus?.query).toContain('[5m]');
  });

  it('names the template and the argument a reference leaves without a value', () => {
    expect(() =>
      checksOf({ templateRef: { name: 'errors', namespace: 'platform' } }, template, 'shop'),
    ).toThrow('AnalysisTemplate "platform/errors" needs a value for "service"');
  });

  it('refuses an argument the template does not declare', () => {
    expect(() =>
      checksOf(
        { templateRef: { name: 'errors' }, args: [{ name: 'servce', value: 'web' }] },
        template,
        'shop',
      ),
    ).toThrow('AnalysisTemplate "shop/errors" has no argument "servce"');
  });

  it('refuses a placeholder the template does not declare', () => {
    const broken: AnalysisTemplateSpec = {
      checks: [{ name: 'up', http: { url: 'http://{{args.host}}/healthz' } }],
    };
    expect(() => checksOf({ templateRef: { name: 'up' } }, broken, 'shop')).toThrow(
      'AnalysisTemplate "shop/up": check "up" uses {{args.host}}, which it does not declare',
    );
  });

  it('fills a threshold argument, which the schema admits and the filled check parses', () => {
    const withThreshold: AnalysisTemplateSpec = {
      args: [{ name: 'max-ratio', value: '0.05' }],
      checks: [
        {
          name: 'ratio',
          prometheus: { address: 'http://p', query: 'up', failWhen: 'result > {{args.max-ratio}}' },
        },
      ],
    };
    const schema = analysisCheckSchema.openApi.properties?.prometheus?.properties?.failWhen?.pattern ?? '';
    expect(new RegExp(schema).test('result > {{args.max-ratio}}')).toBe(true);
    expect(new RegExp(schema).test('result > {{args.max ratio}}')).toBe(false);
    const [check] = checksOf(
      { templateRef: { name: 'ratio' }, args: [{ name: 'max-ratio', value: '0.1' }] },
      withThreshold,
      'shop',
    );
    expect(parseFailWhen(check?.prometheus?.failWhen ?? '')).toEqual({
      operator: '>',
      threshold: 0.1,
      text: 'result > 0.1',
    });
  });

  it('takes an inline check as it is', () => {
    const check = { name: 'up', http: { url: 'http://web.shop/healthz' } };
    expect(checksOf({ check }, undefined, 'shop')).toEqual([check]);
  });
});
