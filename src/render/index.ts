/**
 * Sources rendered (docs/sources.md): what the Git side uses. Write a commit's checkout with
 * checkoutCommit within the repository's run, hand it to a Renderer as a RenderJob, get a
 * RenderResult: the objects in apply order, or a RenderFailure naming the tool, file and line.
 */
export { type Checkout, checkoutCommit, localCheckout, type TreeSource } from './checkout.ts';
export type { DecryptedInput, Decryption } from './decrypt-inputs.ts';
export { CHECKOUT_LIMITS, DEFAULT_RENDER_LIMITS, type RenderLimits } from './limits.ts';
export { RenderInputError, RenderKeyError } from './render-error.ts';
export { Renderer, type RendererOptions, type RenderJob } from './renderer.ts';
export { locateTool, missingTool, type RenderTools, TOOL_FLAGS } from './tools.ts';
export type {
  HelmRender,
  KustomizeRender,
  PlainRender,
  RenderFailure,
  RenderMethod,
  RenderRequest,
  RenderResult,
} from './types.ts';
