/**
 * One render of a checkout (render-checkout's caller wrote it): the pre-checks, then the tool in
 * the sandbox (kustomize, helm) or the files read as they are (plain), then its output read as
 * objects in apply order. Every failure is a RenderFailure naming the tool, and the file and line
 * where they are known; nothing here throws for what the repository holds.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkout } from './checkout.ts';
import { diskView } from './checkout-view.ts';
import { type DecryptedInput, type Decryption, decryptInputs, redactDecrypted } from './decrypt-inputs.ts';
import { checkChart } from './helm-precheck.ts';
import { checkKustomizations, kustomizationIn } from './kustomize-precheck.ts';
import type { RenderLimits } from './limits.ts';
import { applyOrder } from './order.ts';
import { type OutputParsed, type OutputParseLimits, parseOnThread } from './output-thread.ts';
import { resolveWithin, sourcePath } from './paths.ts';
import { plainFiles, plainSizeProblem, readPlain } from './plain.ts';
import type { InputProblem } from './references.ts';
import { runSandboxed, type SandboxOutcome } from './sandbox.ts';
import { boundedMessage, helmFailure, kustomizeFailure, toolMessage } from './tool-errors.ts';
import { missingTool, type RenderTools } from './tools.ts';
import type { HelmRender, RenderFailure, RenderRequest, RenderResult } from './types.ts';

export interface RenderContext {
  readonly tools: RenderTools;
  readonly limits: RenderLimits;
  readonly signal?: AbortSignal | undefined;
  /** The keys of the source's SOPS files; none: they are left encrypted (decrypt-inputs.ts). */
  readonly decryption?: Decryption | undefined;
}

export async function renderCheckout(
  checkout: Checkout,
  request: RenderRequest,
  context: RenderContext,
): Promise<RenderResult> {
  const decrypted: DecryptedInput[] = [];
  const result = await renderInside(checkout, request, context, decrypted);
  // A tool's message may quote what it read (an env line, a value it could not parse).
  if (!result.ok && decrypted.length > 0)
    return {
      ok: false,
      failure: { ...result.failure, message: redactDecrypted(result.failure.message, decrypted) },
    };
  return result;
}

/** The render; `decrypted` receives the SOPS files it decrypted, as soon as they are. */
async function renderInside(
  checkout: Checkout,
  request: RenderRequest,
  context: RenderContext,
  decrypted: DecryptedInput[],
): Promise<RenderResult> {
  const path = sourcePath(request.path);
  if (path === undefined)
    return refused({
      file: request.path,
      message: `path ${JSON.stringify(request.path)}: not a folder of the repository`,
    });
  const view = diskView(checkout.root);
  if (view.kind(path) !== 'folder')
    return refused({
      file: path,
      message: `no folder ${path === '' ? '(the root)' : path} in the repository at this commit`,
    });
  const method = request.method;
  switch (method.kind) {
    case 'plain':
      return renderPlain(checkout.root, path, method.recurse, context, decrypted);
    case 'kustomize': {
      const program = context.tools.kustomize;
      if (program === undefined)
        return { ok: false, failure: { tool: 'janus', message: missingTool('kustomize') } };
      const files = new Set<string>();
      const problem = checkKustomizations(view, path, files);
      if (problem) return refused(problem);
      const opened = await decryptInputs(checkout.root, files, context.decryption);
      if (!opened.ok) return undecryptable(opened.problem);
      decrypted.push(...opened.decrypted);
      const outcome = await runSandboxed({
        program,
        args: kustomizeArguments(path),
        cwd: checkout.root,
        home: checkout.home,
        limits: context.limits,
        signal: context.signal,
      });
      if (!outcome.ok) {
        return failed(
          'kustomize',
          outcome,
          context.limits,
          (message) => kustomizeFailure(message, path, (folder) => kustomizationIn(view, folder)),
          checkout,
        );
      }
      return objectsOf('kustomize', outcome.stdout, undefined, opened.decrypted, context);
    }
    case 'helm': {
      const program = context.tools.helm;
      if (program === undefined)
        return { ok: false, failure: { tool: 'janus', message: missingTool('helm') } };
      const problem = checkChart(view, path, method.valuesFiles);
      if (problem) return refused(problem);
      const valuesFiles = method.valuesFiles.flatMap((v) => resolveWithin(path, v) ?? []);
      const opened = await decryptInputs(checkout.root, valuesFiles, context.decryption);
      if (!opened.ok) return undecryptable(opened.problem);
      decrypted.push(...opened.decrypted);
      const args = await helmArguments(checkout, path, request.namespace, method);
      const outcome = await runSandboxed({
        program,
        args,
        cwd: checkout.root,
        home: checkout.home,
        limits: context.limits,
        signal: context.signal,
      });
      if (!outcome.ok)
        return failed('helm', outcome, context.limits, (message) => helmFailure(message, path), checkout);
      return objectsOf('helm', outcome.stdout, method.hooks, opened.decrypted, context);
    }
  }
}

/** A plain folder: its files bounded by their sizes, decrypted, read as objects on a thread. */
async function renderPlain(
  root: string,
  path: string,
  recurse: boolean,
  context: RenderContext,
  decrypted: DecryptedInput[],
): Promise<RenderResult> {
  const files = plainFiles(root, path, recurse);
  // Bounded before a file is read (decryptInputs reads them all), not only after.
  const tooLarge = plainSizeProblem(root, files, context.limits.maxOutputBytes);
  if (tooLarge) return { ok: false, failure: { tool: 'janus', ...tooLarge } };
  const opened = await decryptInputs(root, files, context.decryption);
  if (!opened.ok) return undecryptable(opened.problem);
  decrypted.push(...opened.decrypted);
  const read = readPlain(root, path, recurse, context.limits.maxOutputBytes);
  if (!read.ok) return { ok: false, failure: { tool: 'janus', ...read.failure } };
  const parsed = await parseOnThread(read.texts, parseLimits(context.limits), context.signal);
  if (!parsed.ok) return unreadable('janus', parsed);
  return { ok: true, objects: applyOrder(parsed.objects), bytes: read.bytes, decrypted: opened.decrypted };
}

/**
 * `kustomize build` with the load restrictor at RootOnly, and never --enable-alpha-plugins,
 * --enable-exec, --enable-helm or --network.
 */
export function kustomizeArguments(path: string): string[] {
  return ['build', path === '' ? '.' : `./${path}`, '--load-restrictor', 'LoadRestrictionsRootOnly'];
}

/**
 * `helm template`, client side only (its default `--dry-run=client`, said explicitly): never
 * `--dry-run=server` or `--validate`, so the chart's `lookup` finds nothing and no cluster is
 * asked; inline values in a file of the render's home, merged last.
 */
export async function helmArguments(
  checkout: Checkout,
  chart: string,
  namespace: string,
  helm: HelmRender,
): Promise<string[]> {
  const args = [
    'template',
    helm.releaseName,
    chart === '' ? '.' : `./${chart}`,
    '--namespace',
    namespace,
    '--dry-run=client',
  ];
  if (helm.includeCRDs) args.push('--include-crds');
  // Ignore: hooks are not rendered; Include: rendered, but never the chart's tests.
  args.push(helm.hooks === 'Ignore' ? '--no-hooks' : '--skip-tests');
  if (helm.kubeVersion !== undefined) args.push('--kube-version', helm.kubeVersion);
  for (const api of helm.apiVersions) args.push('--api-versions', api);
  for (const values of helm.valuesFiles) args.push('--values', `./${resolveWithin(chart, values)}`);
  if (Object.keys(helm.values).length > 0) {
    const inline = join(checkout.home, 'inline-values.json');
    await writeFile(inline, JSON.stringify(helm.values), { mode: 0o600 });
    args.push('--values', inline);
  }
  return args;
}

async function objectsOf(
  tool: 'kustomize' | 'helm',
  stdout: Buffer,
  hooks: HelmRender['hooks'] | undefined,
  decrypted: readonly DecryptedInput[],
  context: RenderContext,
): Promise<RenderResult> {
  const parsed = await parseOnThread(
    [{ what: `${tool}'s output`, text: stdout.toString('utf8') }],
    parseLimits(context.limits),
    context.signal,
  );
  if (!parsed.ok) return unreadable(tool, parsed);
  return { ok: true, objects: applyOrder(parsed.objects, hooks), bytes: stdout.length, decrypted };
}

/**
 * Reading the output may take what the tool could (it has ended): its memory as the thread's
 * heap, its time as the deadline.
 */
function parseLimits(limits: RenderLimits): OutputParseLimits {
  return { heapBytes: limits.memoryBytes, timeoutMs: limits.timeoutMs };
}

/** The output (or a plain file) was not objects, or reading it passed a bound. */
function unreadable(tool: RenderFailure['tool'], parsed: Exclude<OutputParsed, { ok: true }>): RenderResult {
  // A plain file is named, with its line; a tool's output has no file a user could open.
  const file = tool === 'janus' && parsed.what !== undefined ? boundedMessage(parsed.what) : undefined;
  return {
    ok: false,
    failure: {
      tool,
      ...(file !== undefined ? { file, line: parsed.line } : {}),
      ...(parsed.bound !== undefined ? { bound: parsed.bound } : {}),
      message: boundedMessage(parsed.message),
    },
  };
}

/** A SOPS file the render reads could not be decrypted: no bound of the sandbox stopped it. */
function undecryptable(problem: InputProblem): RenderResult {
  return {
    ok: false,
    failure: { tool: 'janus', file: boundedMessage(problem.file), message: boundedMessage(problem.message) },
  };
}

function refused(problem: InputProblem): RenderResult {
  return {
    ok: false,
    failure: {
      tool: 'janus',
      bound: 'input',
      // A name from the repository: Git allows control characters in it.
      file: boundedMessage(problem.file),
      line: problem.line,
      message: boundedMessage(problem.message),
    },
  };
}

const MiB = 1024 * 1024;

function failed(
  tool: 'kustomize' | 'helm',
  outcome: Exclude<SandboxOutcome, { ok: true }>,
  limits: RenderLimits,
  locate: (message: string) => { file?: string | undefined; line?: number | undefined; message: string },
  checkout: Checkout,
): RenderResult {
  const bounded = (message: string): RenderResult => ({
    ok: false,
    failure: { tool, bound: outcome.bound, message },
  });
  if (outcome.aborted)
    return { ok: false, failure: { tool, message: `${tool} was stopped: the render was cancelled` } };
  switch (outcome.bound) {
    case 'time':
      return bounded(
        `${tool} ran longer than ${limits.timeoutMs / 1000} s and was killed (--render-timeout)`,
      );
    case 'output':
      return bounded(
        `${tool} wrote more than ${limits.maxOutputBytes / MiB} MiB and was killed (--render-max-bytes)`,
      );
    case 'memory':
      return bounded(
        `${tool} needed more than ${limits.memoryBytes / MiB} MiB of memory and was killed (--render-memory)`,
      );
    default: {
      const message = toolMessage(outcome.stderr, checkout.root, checkout.home);
      const failure: RenderFailure = {
        tool,
        ...locate(message.length > 0 ? message : `${tool} exited ${outcome.exitCode}`),
      };
      return { ok: false, failure };
    }
  }
}
