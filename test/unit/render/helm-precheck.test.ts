import { describe, expect, it } from 'vitest';
import { checkChart } from '../../../src/render/helm-precheck.ts';
import { MAX_CONFIG_BYTES } from '../../../src/render/references.ts';
import { memoryView } from './memory-view.ts';

const chartYaml = (dependencies = '') => `apiVersion: v2\nname: shop\nversion: 1.0.0\n${dependencies}`;
const dependency = (name: string, repository: string) =>
  `dependencies:\n- name: ${name}\n  version: 1.0.0\n  repository: ${repository}\n`;

describe('the Helm pre-check', () => {
  it('accepts a chart whose dependencies are vendored, as folders (by their name) or archives', () => {
    const view = memoryView({
      'c/Chart.yaml': chartYaml(
        `${dependency('cache', 'https://charts.example')}- name: db\n  version: 1.0.0\n  repository: oci://registry.example/charts\n`,
      ),
      'c/charts/redis/Chart.yaml': 'apiVersion: v2\nname: cache\nversion: 1.0.0\n',
      'c/charts/db-1.0.0.tgz': 'archive',
      'c/values.yaml': '',
      'values/prod.yaml': '',
    });
    expect(checkChart(view, 'c', ['values.yaml', '../values/prod.yaml'])).toBeUndefined();
  });

  it.each([
    ['https://charts.example/stable', ' from https://charts.example/stable'],
    ['oci://registry.example/charts', ' from oci://registry.example/charts'],
    ['"@stable"', ' from @stable'],
    ['""', ''],
  ])(
    'refuses a dependency from %s that is not vendored, naming Chart.yaml and its line',
    (repository, from) => {
      const view = memoryView({ 'c/Chart.yaml': chartYaml(dependency('db', repository)) });
      expect(checkChart(view, 'c', [])).toEqual({
        file: 'c/Chart.yaml',
        line: 5,
        message: `dependencies[0] "db"${from} is not vendored in c/charts/; a render fetches no chart (run helm dependency build and commit charts/)`,
      });
    },
  );

  it('refuses a file:// dependency out of the checkout', () => {
    const view = memoryView({ 'c/Chart.yaml': chartYaml(dependency('db', 'file://../../../db')) });
    expect(checkChart(view, 'c', [])?.message).toContain('leads out of the repository checkout');
  });

  it("checks vendored subcharts' dependencies and requirements.yaml (apiVersion v1 charts)", () => {
    const nested = memoryView({
      'c/Chart.yaml': chartYaml(),
      'c/charts/sub/Chart.yaml': `apiVersion: v2\nname: sub\nversion: 1.0.0\n${dependency('deep', 'https://charts.example')}`,
    });
    expect(checkChart(nested, 'c', [])).toMatchObject({ file: 'c/charts/sub/Chart.yaml', line: 5 });
    const v1 = memoryView({
      'Chart.yaml': 'apiVersion: v1\nname: old\nversion: 1.0.0\n',
      'requirements.yaml': dependency('db', 'https://charts.example'),
    });
    expect(checkChart(v1, '', [])).toMatchObject({ file: 'requirements.yaml', line: 2 });
  });

  it('needs a Chart.yaml, and values files that are files of the checkout', () => {
    expect(checkChart(memoryView({ 'c/values.yaml': '' }), 'c', [])?.message).toBe('no Chart.yaml in c');
    const view = memoryView({ 'c/Chart.yaml': chartYaml(), 'c/templates/x.yaml': '' });
    expect(checkChart(view, 'c', ['../../secrets.yaml'])?.message).toContain(
      'helm.valuesFiles[0] "../../secrets.yaml": leads out',
    );
    expect(checkChart(view, 'c', ['/etc/passwd'])?.message).toContain('an absolute path');
    expect(checkChart(view, 'c', ['https://example.com/values.yaml'])?.message).toContain(
      'a remote reference',
    );
    expect(checkChart(view, 'c', ['missing.yaml'])?.message).toContain('no file or folder c/missing.yaml');
    expect(checkChart(view, 'c', ['templates'])?.message).toContain('not a file');
  });

  it('refuses a Chart.yaml of more than 1 MiB before parsing it (MAX_CONFIG_BYTES)', () => {
    const view = memoryView({
      'c/Chart.yaml': `${chartYaml()}keywords: [${'[],'.repeat(MAX_CONFIG_BYTES / 3)}[]]\n`,
    });
    expect(checkChart(view, 'c', [])).toEqual({
      file: 'c/Chart.yaml',
      message: `c/Chart.yaml is more than ${MAX_CONFIG_BYTES} bytes, more than a pre-check reads`,
    });
  });
});
