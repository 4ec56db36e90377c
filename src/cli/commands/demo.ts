/** `janus demo`: the whole product on a laptop, in a few minutes, with nothing left behind. */
import { defineCommand, type Flags, UsageError } from '../command.ts';
import { Cleanup } from '../demo/cleanup.ts';
import { prerequisiteProblems } from '../demo/cluster.ts';
import { Narrator } from '../demo/progress.ts';
import { sourcesStepCount, tellSourcesStory } from '../demo/sources-story.ts';
import { stepCount, tellStory } from '../demo/story.ts';
import { onInterrupt } from '../interrupt.ts';
import { processStreams } from '../output.ts';
import { parseTimeout } from '../wait.ts';

const DEMO_FLAGS = {
  kubeconfig: {
    type: 'string',
    env: 'JANUS_DEMO_KUBECONFIG',
    placeholder: 'path',
    description:
      'use this existing cluster (cluster-admin) instead of starting a local control plane; namespace shop must not exist',
  },
  keep: {
    type: 'boolean',
    env: 'JANUS_DEMO_KEEP',
    description: 'keep everything running at the end, to look around, until Ctrl-C',
  },
  sources: {
    type: 'boolean',
    env: 'JANUS_DEMO_SOURCES',
    description:
      'tell the sources story instead: the shop as a Kustomize overlay kept by a Source, each commit one transaction (builds kustomize and helm the first time)',
  },
  ui: {
    type: 'boolean',
    env: 'JANUS_DEMO_UI',
    description:
      'open the web view (janus ui) on the shop as the story starts, and keep it until Ctrl-C at the end',
  },
  timeout: {
    type: 'string',
    env: 'JANUS_DEMO_TIMEOUT',
    default: '3m',
    placeholder: 'duration',
    description: 'how long each step may wait for the cluster or the results branch',
  },
} as const satisfies Flags;

export default defineCommand({
  name: 'demo',
  usage: 'janus demo [flags]',
  description: `
The first thing to run. Needs Node.js 24, Go and git, and a source checkout of Janus (without
Go, or without test/, it starts the control plane built earlier in ~/.cache/janus/kube-testenv
and says how to build one when there is none):

  1. builds (first time only, 5-10 minutes, cached) and starts a local Kubernetes control plane
     on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, and two
     nodes simulated by kwok);
  2. installs Janus's CRD and RBAC, and the example shop from examples/setup;
  3. creates a local Git repository holding examples/transactions;
  4. runs the main job (janus run) over it: deploy-v2 commits, expose-checkout fails at commit
     and is rolled back;
  5. commits release 3 (examples/release-3), whose pods never become ready: the health gate
     rolls it back by itself while release 2 keeps serving;
  6. commits release 4 (examples/release-4), whose pods become ready but whose checkout fails:
     a smoke test in the bake window (played by the demo on a loopback port) rolls it back;
  7. commits a ROLLBACK file for deploy-v2, which Janus rolls back;
  8. prints the results branch (git log janus/results) and a result file;
  9. stops every process and deletes every temporary folder — also on Ctrl-C.

With --ui it also serves the web view of janus ui on 127.0.0.1 and opens it (where a browser
can be started; its URL is printed either way), so the story can be watched there: the
transactions as they run, the bake window, the rollbacks in reverse order, the results branch.
Everything then keeps running at the end until Ctrl-C, as with --keep.

With --sources it tells the sources story instead (docs/sources.md): the shop as a Kustomize
overlay (examples/sources) kept by a Source. It builds kustomize and helm the first time
(test/kube-testenv/build-render-tools.sh, about 5 minutes, cached in
~/.cache/janus/render-tools; without Go, the build in that cache) and gives them to janus run;
commit 1 applies release 1; commit 2 (examples/sources-release-2) changes the image and the
settings of a generated ConfigMap, whose name is a hash of them: one transaction creates the new
ConfigMap, updates the Deployment and prunes the old ConfigMap; commit 3
(examples/sources-release-3) is a release whose pods never become ready: the health gate fails
and Janus rolls the whole commit back (the Deployment as commit 2 left it, the pruned ConfigMap
re-created) while release 2 keeps serving; then kubectl get jsrc and the results branch.

With --kubeconfig it uses an existing cluster instead of step 1 (no Go needed, but for
kustomize with --sources when it is not built yet), creates the namespace shop there and
deletes it at the end; the CRD and RBAC stay installed.

Exit status: 0 the demo ran to the end; 1 something failed (the end of the main job's log is
shown); 2 a prerequisite is missing (or a usage error); 130 interrupted with Ctrl-C.`,
  flags: DEMO_FLAGS,
  async run(values, args) {
    if (args.length > 0) throw new UsageError(`janus demo takes no arguments, got "${args.join(' ')}"`);
    // Every flag is checked before the control plane is built or started.
    const waitMs = parseTimeout(values.timeout);
    if (waitMs <= 0) throw new UsageError(`--timeout ${values.timeout}: must be more than 0s`);
    const local = values.kubeconfig === undefined;
    const problems = prerequisiteProblems(local, values.sources);
    if (problems.length > 0) throw new UsageError(`cannot run the demo:\n  ${problems.join('\n  ')}`);
    const { stderr } = processStreams();
    const narrator = new Narrator(stderr, values.sources ? sourcesStepCount(local) : stepCount(local));
    const cleanup = new Cleanup();
    const interrupt = onInterrupt();
    narrator.say(
      'Janus demo: transactional GitOps for Kubernetes, end to end on this machine. Ctrl-C stops it cleanly.',
    );
    const story = values.sources ? tellSourcesStory : tellStory;
    try {
      await story({
        kubeconfig: values.kubeconfig,
        waitMs,
        ui: values.ui,
        signal: interrupt.signal,
        narrator,
        cleanup,
        beforeCleanup: async (info) => {
          if (!values.keep && !values.ui) return;
          narrator.say(`\nEverything keeps running until you press Ctrl-C. In another terminal, try:`);
          narrator.detail(`export KUBECONFIG=${info.adminKubeconfig}`);
          narrator.detail('./bin/janus status -A');
          if (values.sources) {
            narrator.detail('kubectl get jsrc -n shop -o yaml');
            narrator.detail(`./bin/janus history --source shop/shop --repo ${info.repo}`);
          } else narrator.detail('./bin/janus status deploy-v2 -n shop');
          narrator.detail(`git -C ${info.repo} log --stat janus/results`);
          await new Promise((resolve) => interrupt.signal.addEventListener('abort', resolve, { once: true }));
        },
      });
      narrator.say(
        '\nThat was Janus. Next: docs/cli.md (every command), docs/operations.md (install it in a cluster).',
      );
      return 0;
    } catch (e) {
      if (interrupt.reason() !== 'interrupted') throw e;
      narrator.say('\nInterrupted.');
      return 130;
    } finally {
      narrator.say('\nCleaning up:');
      await cleanup.run((line) => narrator.detail(line));
      interrupt.dispose();
    }
  },
});
