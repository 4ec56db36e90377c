/**
 * What a source render takes and gives (docs/sources.md): how a path of the repository checkout
 * is rendered, and the objects it rendered or why it could not. Types only: the renderers
 * (kustomize, helm, plain) and the sandbox they run in live beside this file.
 */
import type { KubeObject } from '../kube/resources.ts';
import type { DecryptedInput } from './decrypt-inputs.ts';

export interface KustomizeRender {
  readonly kind: 'kustomize';
}

export interface HelmRender {
  readonly kind: 'helm';
  /** helm template's release name. */
  readonly releaseName: string;
  /** Relative to the chart's folder, merged in order (helm -f). */
  readonly valuesFiles: readonly string[];
  /** Inline values, merged last. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Render the chart's crds/ folder (helm --include-crds). */
  readonly includeCRDs: boolean;
  /** Ignore: hook resources are not rendered; Include: pre-* first, post-* last (docs/sources.md). */
  readonly hooks: 'Ignore' | 'Include';
  readonly kubeVersion?: string | undefined;
  readonly apiVersions: readonly string[];
}

export interface PlainRender {
  readonly kind: 'plain';
  /** Walk subfolders too. */
  readonly recurse: boolean;
}

export type RenderMethod = KustomizeRender | HelmRender | PlainRender;

export interface RenderRequest {
  /** The folder rendered, relative to the checkout's root (no leading slash, no `..`). */
  readonly path: string;
  readonly method: RenderMethod;
  /** The source's namespace: helm --namespace; what objects without a namespace default to. */
  readonly namespace: string;
}

/** Where a render failed, as the tool said it (file and line when it gave them). */
export interface RenderFailure {
  readonly tool: 'kustomize' | 'helm' | 'janus';
  /** A path relative to the checkout's root, when known. */
  readonly file?: string | undefined;
  readonly line?: number | undefined;
  /** The tool's message, bounded and printable. */
  readonly message: string;
  /** Why the sandbox stopped it, when it did (time, memory, output, a refused input). */
  readonly bound?: 'time' | 'memory' | 'output' | 'input' | undefined;
}

export type RenderResult =
  | {
      readonly ok: true;
      /** The rendered objects, in apply order (docs/sources.md, "What a commit does"). */
      readonly objects: readonly KubeObject[];
      /** Bytes of YAML the tool wrote. */
      readonly bytes: number;
      /** The SOPS-encrypted files the render read, decrypted (decrypt-inputs.ts). */
      readonly decrypted?: readonly DecryptedInput[] | undefined;
    }
  | { readonly ok: false; readonly failure: RenderFailure };
