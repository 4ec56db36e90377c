/**
 * The render flags of `janus run`, `janus validate` and `janus plan` (docs/sources.md, "The
 * sandbox"): where kustomize and helm are, and what one render may cost. A tool missing is no
 * error here (a repository without sources needs neither): a source that needs it fails its
 * render, naming the flag. A path given that is not an executable, or a bound that is not one,
 * is a UsageError naming its flag.
 */
import { DEFAULT_RENDER_LIMITS, type RenderLimits } from '../render/limits.ts';
import { locateTool, type RenderTools } from '../render/tools.ts';
import { parseByteSize } from './byte-size.ts';
import { durationFlag, type Flags, positiveInt, UsageError } from './command.ts';

const MiB = 1024 * 1024;

export const RENDER_FLAGS = {
  'kustomize-path': {
    type: 'string',
    env: 'JANUS_KUSTOMIZE_PATH',
    placeholder: 'path',
    description:
      'the kustomize (v5) that renders Kustomize sources (default: kustomize on the PATH; the image ships it)',
  },
  'helm-path': {
    type: 'string',
    env: 'JANUS_HELM_PATH',
    placeholder: 'path',
    description: 'the helm (v4) that renders Helm sources (default: helm on the PATH; the image ships it)',
  },
  'render-timeout': {
    type: 'string',
    env: 'JANUS_RENDER_TIMEOUT',
    default: `${DEFAULT_RENDER_LIMITS.timeoutMs / 1000}s`,
    placeholder: 'duration',
    description: "a source's render (kustomize build, helm template) is killed after this",
  },
  'render-memory': {
    type: 'string',
    env: 'JANUS_RENDER_MEMORY',
    default: `${DEFAULT_RENDER_LIMITS.memoryBytes / MiB}Mi`,
    placeholder: 'size',
    description:
      'memory one render may take (resident; its address space is 1Gi plus twice this), then it is killed',
  },
  'render-max-bytes': {
    type: 'string',
    env: 'JANUS_RENDER_MAX_BYTES',
    default: `${DEFAULT_RENDER_LIMITS.maxOutputBytes / MiB}Mi`,
    placeholder: 'size',
    description: 'YAML one render may write, then it is killed',
  },
  'render-concurrency': {
    type: 'string',
    env: 'JANUS_RENDER_CONCURRENCY',
    default: String(DEFAULT_RENDER_LIMITS.concurrency),
    placeholder: 'count',
    description: 'renders at once, taken fairly across sources (one at a time per source)',
  },
} as const satisfies Flags;

export interface RenderSettings {
  readonly tools: RenderTools;
  readonly limits: RenderLimits;
}

export function renderSettings(
  values: {
    'kustomize-path': string | undefined;
    'helm-path': string | undefined;
    'render-timeout': string;
    'render-memory': string;
    'render-max-bytes': string;
    'render-concurrency': string;
  },
  env: NodeJS.ProcessEnv = process.env,
): RenderSettings {
  const tool = (name: 'kustomize' | 'helm', flag: 'kustomize-path' | 'helm-path') => {
    const given = values[flag];
    const found = locateTool(name, given, env.PATH);
    if (given && found === undefined) throw new UsageError(`--${flag}: ${given} is not an executable file`);
    return found;
  };
  const timeoutMs = durationFlag(values['render-timeout'], 'render-timeout');
  if (timeoutMs < 1000) throw new UsageError('--render-timeout: must be at least 1s');
  const memoryBytes = parseByteSize(values['render-memory'], 'render-memory');
  if (memoryBytes < 64 * MiB) throw new UsageError('--render-memory: must be at least 64Mi');
  const maxOutputBytes = parseByteSize(values['render-max-bytes'], 'render-max-bytes');
  if (maxOutputBytes < 1) throw new UsageError('--render-max-bytes: must be more than 0');
  return {
    tools: { kustomize: tool('kustomize', 'kustomize-path'), helm: tool('helm', 'helm-path') },
    limits: {
      timeoutMs,
      memoryBytes,
      maxOutputBytes,
      concurrency: positiveInt(values['render-concurrency'], 'render-concurrency'),
    },
  };
}
