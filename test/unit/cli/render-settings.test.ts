import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.ts';
import { renderSettings } from '../../../src/cli/render-settings.ts';
import { DEFAULT_RENDER_LIMITS } from '../../../src/render/limits.ts';
import { missingTool } from '../../../src/render/tools.ts';

const DEFAULTS = {
  'kustomize-path': undefined,
  'helm-path': undefined,
  'render-timeout': '60s',
  'render-memory': '512Mi',
  'render-max-bytes': '16Mi',
  'render-concurrency': '2',
};

describe('the render flags', () => {
  it("default to docs/sources.md's bounds, and to the tools on the PATH, or none", () => {
    expect(renderSettings(DEFAULTS, { PATH: '/nonexistent' })).toEqual({
      tools: { kustomize: undefined, helm: undefined },
      limits: DEFAULT_RENDER_LIMITS,
    });
    // Relative PATH entries are never searched.
    expect(renderSettings(DEFAULTS, { PATH: '.:bin' }).tools).toEqual({
      kustomize: undefined,
      helm: undefined,
    });
  });

  it('take a path given, made absolute, and refuse one that is not an executable, naming the flag', () => {
    expect(renderSettings({ ...DEFAULTS, 'helm-path': '/bin/sh' }, {}).tools.helm).toBe('/bin/sh');
    expect(() => renderSettings({ ...DEFAULTS, 'kustomize-path': '/etc/hostname-nope' }, {})).toThrow(
      new UsageError('--kustomize-path: /etc/hostname-nope is not an executable file'),
    );
  });

  it.each([
    ['render-timeout', '0.5s', '--render-timeout: must be at least 1s'],
    ['render-timeout', 'soon', '--render-timeout'],
    ['render-memory', '1Mi', '--render-memory: must be at least 64Mi'],
    ['render-max-bytes', 'lots', '--render-max-bytes'],
    ['render-concurrency', '0', '--render-concurrency'],
  ])('refuses --%s %s', (flag, value, message) => {
    expect(() => renderSettings({ ...DEFAULTS, [flag]: value }, {})).toThrow(message);
  });

  it('reads sizes and durations as the other flags do', () => {
    const settings = renderSettings(
      {
        ...DEFAULTS,
        'render-timeout': '2m',
        'render-memory': '1Gi',
        'render-max-bytes': '4Mi',
        'render-concurrency': '8',
      },
      {},
    );
    expect(settings.limits).toEqual({
      timeoutMs: 120_000,
      memoryBytes: 1024 ** 3,
      maxOutputBytes: 4 * 1024 ** 2,
      concurrency: 8,
    });
  });

  it('says how to give a missing tool', () => {
    expect(missingTool('helm')).toContain('--helm-path (JANUS_HELM_PATH)');
    expect(missingTool('kustomize')).toContain('--kustomize-path (JANUS_KUSTOMIZE_PATH)');
  });
});
