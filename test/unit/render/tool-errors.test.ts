/** Failures read from messages captured from kustomize 5.8.2 and helm 4.3.1 (paths made relative as the renderer does). */
import { describe, expect, it } from 'vitest';
import {
  helmFailure,
  kustomizeFailure,
  relativePaths,
  toolMessage,
} from '../../../src/render/tool-errors.ts';

const ROOT = '/tmp/janus-render-abc/repo';
const kustomizationIn = (folder: string) => `${folder}/kustomization.yaml`;

describe("kustomize's failures", () => {
  it('locates a malformed resource by the innermost kustomization it was read for', () => {
    const stderr = `Error: accumulating resources: accumulation err='accumulating resources from '../base': '${ROOT}/g/base' must resolve to a file': recursed accumulation of path '${ROOT}/g/base': accumulating resources: accumulating resources from 'cm.yaml': MalformedYAMLError: yaml: line 4: did not find expected key in File: cm.yaml\n`;
    const message = toolMessage(stderr, ROOT);
    expect(message).not.toContain(ROOT);
    expect(message.startsWith('accumulating resources:')).toBe(true);
    expect(kustomizeFailure(message, 'g/overlay', kustomizationIn)).toMatchObject({
      file: 'g/base/cm.yaml',
      line: 4,
    });
  });

  it("locates a resource of the source's own kustomization", () => {
    const message = toolMessage(
      "Error: accumulating resources: accumulating resources from 'deployment.yaml': MalformedYAMLError: yaml: line 4: did not find expected key in File: deployment.yaml\n",
      ROOT,
    );
    expect(kustomizeFailure(message, 'a', kustomizationIn)).toMatchObject({
      file: 'a/deployment.yaml',
      line: 4,
    });
  });

  it('locates an invalid kustomization of a base', () => {
    const message = toolMessage(
      `Error: accumulating resources: accumulation err='accumulating resources from '../base': '${ROOT}/f/base' must resolve to a file': couldn't make target for path '${ROOT}/f/base': invalid Kustomization: yaml: line 2: did not find expected node content\n`,
      ROOT,
    );
    expect(kustomizeFailure(message, 'f/overlay', kustomizationIn)).toMatchObject({
      file: 'f/base/kustomization.yaml',
      line: 2,
    });
    expect(
      kustomizeFailure(
        'invalid Kustomization: yaml: line 2: did not find expected node content',
        'c',
        kustomizationIn,
      ),
    ).toMatchObject({ file: 'c/kustomization.yaml', line: 2 });
  });

  it("names the file of a missing resource and one out of the load restrictor's root", () => {
    const missing = toolMessage(
      `Error: accumulating resources: accumulation err='accumulating resources from 'missing.yaml': evalsymlink failure on '${ROOT}/b/missing.yaml' : lstat ${ROOT}/b/missing.yaml: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on '${ROOT}/b/missing.yaml' : lstat ${ROOT}/b/missing.yaml: no such file or directory\n`,
      ROOT,
    );
    expect(kustomizeFailure(missing, 'b', kustomizationIn)).toEqual({
      file: 'b/missing.yaml',
      message: missing,
    });
    const security = toolMessage(
      `Error: loading KV pairs: file sources: [../a/deployment.yaml]: security; file '${ROOT}/a/deployment.yaml' is not in or below '${ROOT}/e'\n`,
      ROOT,
    );
    expect(kustomizeFailure(security, 'e', kustomizationIn)).toMatchObject({ file: 'a/deployment.yaml' });
  });

  it('gives the message alone when it names no file', () => {
    expect(kustomizeFailure('something else broke', 'x', kustomizationIn)).toEqual({
      message: 'something else broke',
    });
  });
});

describe("helm's failures", () => {
  it.each([
    [
      'Error: shop/templates/a.yaml:6:8\n  executing "shop/templates/a.yaml" at <include "nope" .>:\n    error calling include:\ntemplate: no template "nope" associated with template "gotpl"\n\nUse --debug flag to render out invalid YAML\n',
      'charts/shop/templates/a.yaml',
      6,
    ],
    [
      'Error: parse error at (shop/templates/a.yaml:4): unexpected "}" in operand\n\nUse --debug flag to render out invalid YAML\n',
      'charts/shop/templates/a.yaml',
      4,
    ],
    [
      'Error: execution error at (shop/templates/a.yaml:5:5): boom\n\nUse --debug flag to render out invalid YAML\n',
      'charts/shop/templates/a.yaml',
      5,
    ],
    [
      'Error: execution error at (shop/charts/cache/templates/cm.yaml:4:11): need x\n',
      'charts/shop/charts/cache/templates/cm.yaml',
      4,
    ],
    [
      'Error: YAML parse error on shop/templates/a.yaml: error converting YAML to JSON: yaml: line 4: did not find expected key\n',
      'charts/shop/templates/a.yaml',
      undefined,
    ],
  ])('locates %j', (stderr, file, line) => {
    const message = toolMessage(stderr, ROOT);
    expect(message).not.toContain('--debug');
    expect(helmFailure(message, 'charts/shop')).toEqual({ file, line, message });
  });

  it('gives the message alone when it names no template', () => {
    const message = toolMessage(
      "Error: an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: sub\n",
      ROOT,
    );
    expect(helmFailure(message, 'c')).toEqual({ message });
  });
});

describe("the tool's message", () => {
  it('keeps the last Error: line onwards, printable and bounded, with the private folders relative', () => {
    expect(toolMessage('warning: x\nError: first\nError: second \u001b[31mred\u001b[0m\n', ROOT)).toBe(
      'second ?[31mred?[0m',
    );
    expect(toolMessage('no error line\n', ROOT)).toBe('no error line');
    expect(toolMessage(`Error: ${'x'.repeat(10_000)}`, ROOT)).toHaveLength(4096);
    expect(relativePaths(`open ${ROOT}/a.yaml in ${ROOT} with /tmp/h/values.json`, ROOT, '/tmp/h')).toBe(
      'open a.yaml in . with <render home>/values.json',
    );
  });
});
