/**
 * Node flags per kind of process, applied by the entry point (launch.ts) for the image and
 * bin/janus alike, and by the demo for its main job.
 *
 * Long-running processes (`janus run`, `janus controller`) are tuned for memory, which is what
 * Janus gave away against the Go operator:
 * - --max-semi-space-size=4: V8 sizes its young generation from the machine's memory (128 MB on
 *   a 24 GiB node, mostly empty), and a controller allocates little between bursts.
 * - --optimize-for-size: a heap that grows less eagerly and is given back sooner.
 * - No JIT tiers (--no-sparkplug --no-maglev --no-turbofan): JavaScript runs in V8's bytecode
 *   interpreter. A controller's CPU goes to parsing and serializing JSON, TLS and HTTP, which are
 *   native code either way; the compilers' own code (8 MiB of the node binary that stays
 *   resident once touched) and the machine code they emit cost more memory than they save CPU.
 *   WebAssembly (fetch's HTTP parser) is not affected.
 *
 * Measured on 2026-11-24, one machine, the side-by-side workload (test/bench/side-by-side.ts:
 * 100 transactions of 5 changes): resident 30 s after, 63 MiB without the JIT tiers against
 * 78 MiB with them (the Go operator: 60 MiB); controller CPU for the 100, 2.7–3.3 s against
 * 2.3–2.9 s, yet 28 against 32 ms per transaction in the throughput benchmark; a 10-change
 * transaction Committed in 226 ms against 275 ms, push → Committed with the webhook 779 ms
 * against 702 ms (medians of 7; the ranges overlap); an idle Git poll of 20,000 commits 143
 * against 107 ms of CPU. Earlier, the two heap flags took the controller holding 10,000 finished
 * Transactions from 155 to 103 MiB. Re-measure (npm run bench) when Node's major version changes.
 *
 * What they cost on the Git side's heaviest path, the poll of one commit that adds 400 transaction
 * directories (2,400 manifests; test/bench/cli.ts; CPU seconds of the polling process, a loaded
 * machine, 2026-11-25): V8's defaults 12.5 s (peak 549 MiB); --max-semi-space-size=4 alone 11.9 s
 * (450 MiB): free; --optimize-for-size alone 27.6 s; no JIT tiers alone 34.3 s (522 MiB); all
 * five 48.5 s (361 MiB). The last two trade seconds of CPU on big commits for resident MiB at
 * rest; which to keep for `janus run` is open (issue 26) until the controller's heavy paths are
 * measured the same way. Since the results writer hashes and compresses its objects in memory
 * (src/git/object-batch.ts), that poll (test/bench/poll-once.ts, paired runs, medians, load
 * average 3–9, 2026-11-25; test/bench/results/poll-400-directories.md): all five flags 33.4 s of
 * CPU and 193 MiB peak, V8's defaults 10.8 s and 347 MiB: here the five cost 23 s of CPU (3.1×)
 * and save 154 MiB of peak. The 256-change transaction and the 10,000-Transaction restart have
 * not been re-measured per flag yet.
 *
 * One-shot commands (validate, plan, status, history, demo …) run with V8's defaults: they are
 * CPU-bound and short, and a CI runner or a laptop has the memory. `janus validate` of 400
 * directories (2,400 manifests): 5.3 s and 215 MiB peak with the defaults, 20.8 s and 74 MiB with
 * the long-running flags (2026-11-25, npm run bench -- cli).
 */
export const LONG_RUNNING_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=4',
  '--optimize-for-size',
  '--no-sparkplug',
  '--no-maglev',
  '--no-turbofan',
];

/** The commands that run until stopped. */
export const LONG_RUNNING_COMMANDS: ReadonlySet<string> = new Set(['run', 'controller']);

/** The Node flags `janus <command>` runs with. */
export function nodeFlagsFor(command: string | undefined): readonly string[] {
  return command !== undefined && LONG_RUNNING_COMMANDS.has(command) ? LONG_RUNNING_NODE_FLAGS : [];
}

/** The flags `command` needs that a process started with `execArgv` lacks. */
export function missingNodeFlags(command: string | undefined, execArgv: readonly string[]): string[] {
  return nodeFlagsFor(command).filter((flag) => !execArgv.includes(flag));
}
