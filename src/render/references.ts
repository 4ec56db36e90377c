/**
 * What a reference written in a kustomization or a chart may be (pure): a path in the checkout,
 * never a URL, a Git reference or an absolute path. Shared by the Kustomize and Helm pre-checks.
 */
import { resolveWithin } from './paths.ts';

/** The part of the checkout a pre-check reads (checkout-view.ts reads the disk). */
export interface CheckoutView {
  /** What is at `path` (relative to the checkout's root), if anything. */
  kind(path: string): 'file' | 'folder' | undefined;
  /** The text of the file at `path`; undefined when it is no file. */
  read(path: string): string | undefined;
  /** The names in the folder at `path`. */
  list(path: string): readonly string[];
}

/** A reference the pre-check refuses, located in the file that makes it. */
export interface InputProblem {
  readonly file: string;
  readonly line?: number | undefined;
  readonly message: string;
}

/**
 * Bytes of a file the pre-checks parse on Janus's own thread (a kustomization, a plugin's
 * configuration, a Chart.yaml, a requirements.yaml): a transaction file's bound
 * (src/gitops/options.ts). The yaml library takes ~60x the text while it parses, far more for
 * dense flow collections; such files are a few KiB.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The text of a file a pre-check parses, or the problem when it is no file or larger than MAX_CONFIG_BYTES. */
export function readConfig(view: CheckoutView, file: string): string | InputProblem {
  const text = view.read(file) ?? '';
  // Characters first: cheaper, and never more than the bytes.
  if (text.length > MAX_CONFIG_BYTES || Buffer.byteLength(text) > MAX_CONFIG_BYTES)
    return { file, message: `${file} is more than ${MAX_CONFIG_BYTES} bytes, more than a pre-check reads` };
  return text;
}

/**
 * Whether `reference` names something remote the way kustomize or Helm would fetch it: a URL
 * (any scheme), an scp-style Git address (`git@host:org/repo`), a go-getter form (`git::`,
 * `?ref=`, `//` between a repository and its folder), a forge shorthand (`github.com/org/repo`).
 */
export function looksRemote(reference: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(reference) ||
    /^[a-z0-9][a-z0-9.-]*::/i.test(reference) ||
    /^[\w.-]+@[\w.-]+:/.test(reference) ||
    /[?&](ref|version|submodules|timeout)=/.test(reference) ||
    /^(github\.com|gitlab\.com|bitbucket\.org|ssh\.dev\.azure\.com|dev\.azure\.com)\//i.test(reference)
  );
}

/**
 * Where a path reference of file `file` (in folder `base`) lands in the checkout, or the problem
 * with it: remote, absolute, out of the checkout, or naming nothing there. `entry` names the
 * field in the message (e.g. `resources[2]`).
 */
export function localReference(
  view: CheckoutView,
  file: string,
  base: string,
  entry: string,
  reference: string,
  line: number | undefined,
): { path: string; kind: 'file' | 'folder' } | InputProblem {
  const at = (message: string): InputProblem => ({
    file,
    line,
    message: `${entry} ${JSON.stringify(reference)}: ${message}`,
  });
  if (looksRemote(reference))
    return at('a remote reference; a render reads the repository only (vendor it into the repository)');
  if (reference.startsWith('/')) return at('an absolute path; paths are relative to the file');
  const path = resolveWithin(base, reference);
  if (path === undefined) return at('leads out of the repository checkout');
  const kind = view.kind(path);
  if (kind === undefined) {
    // kustomize tries a missing local path as a remote one (`example.com/org/repo`).
    if (/^[\w-]+(\.[\w-]+)+\//.test(reference))
      return at('not in the repository; if it is a remote reference, vendor it into the repository');
    return at(`no file or folder ${path} in the repository`);
  }
  return { path, kind };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
