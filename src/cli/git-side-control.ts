/**
 * What `janus suspend`, `janus resume` and `janus poll` share: finding the Git side's control
 * ConfigMap in the controller namespace, writing its annotations, waiting for the leader to
 * answer a poll request, and showing the result.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ANNOTATION_POLL_REQUESTED_AT,
  describeSuspension,
  GIT_CONTROL_SELECTOR,
  type GitSideState,
  gitSideStateOf,
} from '../gitops/git-control.ts';
import { DEFAULT_CONTROLLER_NAMESPACE } from '../gitops/policy.ts';
import { PatchType } from '../kube/client.ts';
import type { KubeObject } from '../kube/resources.ts';
import { type Cluster, connect } from './cluster.ts';
import { type Flags, KUBE_FLAGS, UsageError } from './command.ts';
import { onInterrupt } from './interrupt.ts';
import { formatDocument, OUTPUT_FLAG, type OutputFormat, parseOutput, processStreams } from './output.ts';
import { parseTimeout } from './wait.ts';

export const GIT_SIDE_FLAGS = {
  ...KUBE_FLAGS,
  'controller-namespace': {
    type: 'string',
    env: 'JANUS_CONTROLLER_NAMESPACE',
    default: DEFAULT_CONTROLLER_NAMESPACE,
    placeholder: 'namespace',
    description: 'the namespace janus run runs in, where its Git-side ConfigMaps are',
  },
  repo: {
    type: 'string',
    env: 'JANUS_REPO',
    placeholder: 'url|path',
    description: 'which watched repository, when several janus run share the namespace',
  },
  ...OUTPUT_FLAG,
} as const satisfies Flags;

export const POLL_WAIT_FLAGS = {
  'no-wait': {
    type: 'boolean',
    env: 'JANUS_NO_WAIT',
    description: 'only ask for the poll; do not wait for the controller to answer',
  },
  timeout: {
    type: 'string',
    env: 'JANUS_WAIT_TIMEOUT',
    default: '2m',
    placeholder: 'duration',
    description: 'how long to wait for the controller to answer before giving up (exit 1)',
  },
} as const satisfies Flags;

export interface GitSideValues {
  kubeconfig: string | undefined;
  context: string | undefined;
  'controller-namespace': string;
  repo: string | undefined;
  output: string | undefined;
}

export interface GitSideSession {
  cluster: Cluster;
  object: KubeObject;
  state: GitSideState;
  format: OutputFormat | undefined;
  /** Merge-patches the control object's annotations (null removes one); returns the new state. */
  annotate(annotations: Record<string, string | null>): Promise<GitSideState>;
  /** Human output. */
  say(line: string): void;
  /** The machine-readable document of `state`, with -o. */
  print(state: GitSideState): void;
}

/** Connects, finds the control object, runs `fn`, disconnects. */
export async function withGitSide(
  command: string,
  values: GitSideValues,
  args: string[],
  fn: (session: GitSideSession) => Promise<number>,
): Promise<number> {
  if (args.length > 0) throw new UsageError(`janus ${command} takes no arguments, got "${args.join(' ')}"`);
  const format = parseOutput(values.output, ['json', 'yaml'] as const);
  const namespace = values['controller-namespace'];
  const { stdout, stderr } = processStreams();
  const cluster = await connect({ ...values, namespace }, command);
  try {
    const object = await findControl(cluster, namespace, values.repo);
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: object.metadata.name,
      namespace,
    };
    return await fn({
      cluster,
      object,
      state: gitSideStateOf(object),
      format,
      annotate: async (annotations) =>
        gitSideStateOf(await cluster.objects.patch(ref, { metadata: { annotations } }, PatchType.merge)),
      say: (line) => stderr.write(`${line}\n`),
      print: (state) => {
        if (format) stdout.write(formatDocument(state, format));
      },
    });
  } finally {
    await cluster.close();
  }
}

async function findControl(
  cluster: Cluster,
  namespace: string,
  repo: string | undefined,
): Promise<KubeObject> {
  const list = await cluster.objects.list('v1', 'ConfigMap', namespace, {
    labelSelector: GIT_CONTROL_SELECTOR,
  });
  const all = list.items.map((item) => ({ ...item, apiVersion: 'v1', kind: 'ConfigMap' }));
  const matching = repo === undefined ? all : all.filter((o) => gitSideStateOf(o).repository === repo);
  const [only, ...more] = matching;
  if (only && more.length === 0) return only;
  const listed = all.map((o) => {
    const s = gitSideStateOf(o);
    return `  ${s.repository} (branch ${s.branch}, folder ${s.root}): ConfigMap ${s.name}`;
  });
  if (!only) {
    throw new UsageError(
      all.length === 0
        ? `no Git side found in namespace ${namespace}: janus run creates its ConfigMap (label ${GIT_CONTROL_SELECTOR}) when it starts leading. Is it running there (--controller-namespace)?`
        : `no Git side of repository ${repo} in namespace ${namespace}; there is:\n${listed.join('\n')}`,
    );
  }
  throw new UsageError(
    `${matching.length} Git sides in namespace ${namespace}; choose one with --repo:\n${listed.join('\n')}`,
  );
}

/** "https://git.example.com/org/repo (branch main, folder transactions)" */
export function describeSource(state: GitSideState): string {
  return `${state.repository} (branch ${state.branch}, folder ${state.root})`;
}

/**
 * Asks for a poll (a new value of tx.janus.io/poll-requested-at, written with `alsoAnnotate`) and, unless --no-wait, waits
 * until the leader records its answer. Exit status 0 when the poll succeeded, 1 when it failed
 * or the wait timed out.
 */
export async function requestPoll(
  session: GitSideSession,
  values: { 'no-wait': boolean; timeout: string },
  alsoAnnotate: Record<string, string | null> = {},
): Promise<number> {
  const timeoutMs = parseTimeout(values.timeout);
  const request = new Date().toISOString();
  // One write: the leader sees a resume and its poll request together, so the poll that
  // answers the request is the one that reads what landed while suspended.
  const asked = await session.annotate({ ...alsoAnnotate, [ANNOTATION_POLL_REQUESTED_AT]: request });
  if (values['no-wait']) {
    session.say(`poll of ${describeSource(asked)} requested`);
    session.print(asked);
    return 0;
  }
  session.say(`poll of ${describeSource(asked)} requested; waiting for the controller`);
  const interrupt = onInterrupt(timeoutMs);
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: asked.name, namespace: asked.namespace };
  try {
    for (;;) {
      const state = gitSideStateOf(await session.cluster.objects.get(ref));
      const answer = state.lastPoll;
      if (answer && answers(answer.request, request)) {
        const commit = answer.commit ? ` at ${answer.commit.slice(0, 12)}` : '';
        session.say(`${answer.ok ? 'polled' : 'poll failed'}${commit}: ${answer.result}`);
        session.print(state);
        return answer.ok ? 0 : 1;
      }
      await sleep(500, undefined, { signal: interrupt.signal }).catch(() => undefined);
      if (interrupt.signal.aborted) {
        const why = interrupt.reason() === 'timeout' ? `no answer within ${values.timeout}` : 'interrupted';
        session.say(
          `${why}: is janus run running and leading in ${asked.namespace}? The request stays; the leader answers it when it can.`,
        );
        session.print(state);
        return 1;
      }
    }
  } finally {
    interrupt.dispose();
  }
}

/** A poll recorded for `recorded` answers `request` too when it was asked for later (RFC 3339 times compare as text). */
function answers(recorded: string | undefined, request: string): boolean {
  return recorded === request || (recorded !== undefined && ISO_TIME.test(recorded) && recorded > request);
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T/;

/** The state in a few lines, for people. */
export function describeGitSide(state: GitSideState): string[] {
  const lines = [`Git side: ${describeSource(state)}`];
  lines.push(state.suspended ? `  ${describeSuspension(state.suspended)}` : '  active: polling');
  if (state.lastPoll) {
    const commit = state.lastPoll.commit ? ` at ${state.lastPoll.commit.slice(0, 12)}` : '';
    lines.push(`  last recorded poll ${state.lastPoll.at}${commit}: ${state.lastPoll.result}`);
  }
  return lines;
}
