/**
 * Where the render tools are: the paths the operator gave (--kustomize-path, --helm-path), else
 * the first `kustomize` and `helm` on the PATH. Renders run them by absolute path, with a PATH of
 * nothing (sandbox.ts).
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export interface RenderTools {
  /** Absolute path of kustomize (the kustomize CLI, v5); undefined: not installed. */
  readonly kustomize: string | undefined;
  /** Absolute path of helm (v4); undefined: not installed. */
  readonly helm: string | undefined;
}

/** The flag that tells Janus where each tool is. */
export const TOOL_FLAGS = { kustomize: 'kustomize-path', helm: 'helm-path' } as const;

/** What a render says when its tool is not installed. */
export function missingTool(tool: keyof RenderTools): string {
  return `${tool} is not installed where Janus runs: give its path with --${TOOL_FLAGS[tool]} (JANUS_${TOOL_FLAGS[tool].toUpperCase().replace('-', '_')}) or put ${tool} on the PATH (the image ships it in /usr/local/bin)`;
}

/** The executable `name` on `path` (a PATH value), absolute; undefined when there is none. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `given` made absolute, or `name` found on the PATH; undefined when neither is executable. */
export function locateTool(
  name: string,
  given: string | undefined,
  path: string | undefined,
): string | undefined {
  if (given !== undefined && given !== '') {
    const absolute = resolve(given);
    return isExecutable(absolute) ? absolute : undefined;
  }
  return findOnPath(name, path);
}
