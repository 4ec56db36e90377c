/**
 * Node flags per kind of process, applied by the entry point (launch.ts) for the image and
 * bin/janus alike, and by the demo for its main job. Each flag below was weighed on the heaviest
 * paths of the process it is given to (`npm run bench -- flags`, test/bench/node-flags-trade.ts;
 * the poll by test/bench/poll-once.ts); re-measure when Node's major version changes.
 *
 * The flags:
 * - --max-semi-space-size=4: V8 sizes its young generation from the machine's memory (128 MB on
 *   a 24 GiB node, mostly empty), and a controller allocates little between bursts. Free on every
 *   path measured; alone it takes the controller from 117 to 98 MiB after the side-by-side
 *   workload and from 173 to 125 MiB after a restart over 10,000 finished Transactions.
 * - --optimize-for-size: a heap that grows less eagerly and is given back sooner, and less eager
 *   optimization.
 * - No JIT tiers (--no-sparkplug --no-maglev --no-turbofan): JavaScript runs in V8's bytecode
 *   interpreter; the compilers' own code (8 MiB of the node binary that stays resident once
 *   touched) and the machine code they emit are not paid for. WebAssembly (fetch's HTTP parser)
 *   is not affected.
 *
 * `janus controller` (no Git; its CPU goes to JSON, TLS and HTTP, native code either way) keeps
 * all five. Medians of 3 alternated runs, 2026-11-26, one machine, against
 * --max-semi-space-size=4 alone: resident 30 s after the side-by-side workload (100 transactions
 * of 5 changes) 67 against 98 MiB (the Go operator: 60 MiB), after a restart over 10,000 finished
 * Transactions 85 against 125 MiB; the CPU they cost: 2.6 against 1.3 s for those 100
 * transactions, 0.85 against 0.70 s for one transaction of 256 changes, 2.3 against 1.6 s for the
 * restart; wall times (the 256-change transaction Committed in 6.2 against 5.1 s, the restart
 * ready in 8.1 against 7.3 s) within the runs' spread. About 12 ms of CPU per transaction buys
 * 31–40 MiB: kept.
 *
 * `janus run` is the controller and the Git poller, and the poller parses YAML: JavaScript, where
 * the interpreter is slowest. The poll of one commit adding 400 transaction directories (2,400
 * manifests; poll-once.ts, CPU time of the polling process, 2026-11-26): V8's defaults 13.1 s
 * (peak 329 MiB); --max-semi-space-size=4 alone 12.3 s (226 MiB); with --no-turbofan 13.9 s
 * (231 MiB); with --no-maglev --no-turbofan too 23.7 s (204 MiB); with --optimize-for-size 22.6 s
 * (206 MiB); all five 34.4 s (194 MiB). Since packed objects are read from the pack and results
 * pushed from memory (npm run bench -- cli, medians of 5, quiet machine): the semi-space flag
 * alone 5.8 s (peak 174 MiB), all five 14.6 s (143 MiB). A big merge would wait 9 s more of CPU,
 * and every other tenant's reconciles with it (one event loop), to save 31 MiB at rest and 31 MiB
 * of peak: `janus run` keeps only the semi-space flag. --no-turbofan (Maglev kept) saves nothing measurable at rest (101 against
 * 98 MiB) and is not kept either.
 *
 * One-shot commands (validate, plan, status, history, demo …) run with V8's defaults: they are
 * CPU-bound and short, and a CI runner or a laptop has the memory. `janus validate` of 400
 * directories (2,400 manifests): 5.3 s and 215 MiB peak with the defaults, 20.8 s and 74 MiB with
 * the controller's flags (2026-11-25, npm run bench -- cli).
 */
/** `janus controller`: tuned for memory (the figures above). */
export const CONTROLLER_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=4',
  '--optimize-for-size',
  '--no-sparkplug',
  '--no-maglev',
  '--no-turbofan',
];

/** `janus run`: the controller and the Git poller, whose YAML parse needs the JIT (the figures above). */
export const RUN_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

const FLAGS_BY_COMMAND: ReadonlyMap<string, readonly string[]> = new Map([
  ['run', RUN_NODE_FLAGS],
  ['controller', CONTROLLER_NODE_FLAGS],
]);

/** The commands that run until stopped, and have flags of their own. */
export const LONG_RUNNING_COMMANDS: ReadonlySet<string> = new Set(FLAGS_BY_COMMAND.keys());

/** The Node flags `janus <command>` runs with. */
export function nodeFlagsFor(command: string | undefined): readonly string[] {
  return (command !== undefined && FLAGS_BY_COMMAND.get(command)) || [];
}

/** The flags `command` needs that a process started with `execArgv` lacks. */
export function missingNodeFlags(command: string | undefined, execArgv: readonly string[]): string[] {
  return nodeFlagsFor(command).filter((flag) => !execArgv.includes(flag));
}
