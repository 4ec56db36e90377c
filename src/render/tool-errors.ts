/**
 * Where a failed render went wrong, read from the tool's own words (pure): the message (its last
 * `Error:` onwards, paths of the private checkout made relative to the repository, printable and
 * bounded) and, where the tool gives them, the file and line, as paths of the repository.
 * Written against messages captured from kustomize 5.8 and helm 4.3 (test/unit/render/).
 */
import { posix } from 'node:path';
import { printable } from '../text/printable.ts';
import { MAX_FAILURE_MESSAGE } from './limits.ts';

export interface ToolFailure {
  readonly file?: string | undefined;
  readonly line?: number | undefined;
  readonly message: string;
}

/**
 * The tool's message: from its last line starting `Error:` (everything, when none does), with
 * helm's "Use --debug" advice dropped, the private folders' paths (`root`, `home`) made relative,
 * control characters replaced, at most MAX_FAILURE_MESSAGE characters.
 */
export function toolMessage(stderr: string, root: string, home?: string): string {
  let text = relativePaths(stderr, root, home)
    .replace(/\n*Use --debug flag to render out invalid YAML\s*$/, '')
    .trim();
  const lines = text.split('\n');
  const last = lines.findLastIndex((line) => line.startsWith('Error: '));
  if (last >= 0) text = lines.slice(last).join('\n').slice('Error: '.length);
  return boundedMessage(text);
}

/** A message of a failure: control characters replaced, at most MAX_FAILURE_MESSAGE characters. */
export function boundedMessage(message: string): string {
  const text = printable(message);
  return text.length > MAX_FAILURE_MESSAGE ? `${text.slice(0, MAX_FAILURE_MESSAGE - 1)}…` : text;
}

/** `root/x` becomes `x`, `root` itself `.`, and `home`'s paths `<render home>/…`. */
export function relativePaths(text: string, root: string, home?: string): string {
  let out = text.split(`${root}/`).join('').split(root).join('.');
  if (home) out = out.split(home).join('<render home>');
  return out;
}

/**
 * helm template's failures: `Error: chart/templates/x.yaml:6:8` (an executing error), `parse error
 * at (chart/templates/x.yaml:4)`, `execution error at (chart/templates/x.yaml:5:5)` (fail,
 * required), `template: chart/templates/x.yaml:4:12:`, `YAML parse error on
 * chart/templates/x.yaml` (a line of the rendered text, not the template's: no line). Helm names
 * a template by the chart's name; `chartPath` is its folder in the repository.
 */
export function helmFailure(message: string, chartPath: string): ToolFailure {
  const located =
    /^([^\s:()]+\.(?:ya?ml|tpl|txt|json)):(\d+)(?::\d+)?\s*$/m.exec(message) ??
    /(?:parse|execution) error at \(([^\s:()]+):(\d+)(?::\d+)?\)/.exec(message) ??
    /template: ([^\s:()]+):(\d+):\d+:/.exec(message);
  const file = located?.[1] ?? /YAML parse error on ([^\s:]+):/.exec(message)?.[1];
  if (file === undefined) return { message };
  const inChart = file.includes('/') ? file.slice(file.indexOf('/') + 1) : file;
  return {
    file: chartPath === '' ? inChart : `${chartPath}/${inChart}`,
    line: located ? Number(located[2]) : undefined,
    message,
  };
}

/**
 * kustomize build's failures, paths already relative to the repository: the kustomization being
 * built is the innermost `recursed accumulation of path 'x'` or `couldn't make target for path
 * 'x'` (else the source's folder); a file is `in File: f` (relative to that folder), `security;
 * file 'f'` (out of the load restrictor's root) or `evalsymlink failure on 'f'` (missing); an
 * invalid kustomization is that folder's kustomization file. The line is YAML's `yaml: line N`.
 */
export function kustomizeFailure(
  message: string,
  sourcePath: string,
  kustomizationIn: (folder: string) => string | undefined,
): ToolFailure {
  let folder = sourcePath;
  for (const m of message.matchAll(
    /(?:recursed accumulation of path|couldn't make target for path) '([^']*)'/g,
  ))
    folder = clean(m[1] as string);
  const yamlLine = [...message.matchAll(/yaml: line (\d+)/g)].at(-1)?.[1];
  const line = yamlLine === undefined ? undefined : Number(yamlLine);
  const inFile = /in File: (\S+)/.exec(message)?.[1];
  if (inFile !== undefined) return { file: clean(posix.join(folder, inFile)), line, message };
  const named =
    /security; file '([^']+)'/.exec(message)?.[1] ?? /evalsymlink failure on '([^']+)'/.exec(message)?.[1];
  if (named !== undefined) return { file: clean(named), message };
  if (/invalid Kustomization/.test(message))
    return { file: kustomizationIn(folder) ?? folder, line, message };
  return { message };
}

function clean(path: string): string {
  const normalized = posix.normalize(path);
  return normalized === '.' ? '' : normalized.replace(/^\.\//, '');
}
