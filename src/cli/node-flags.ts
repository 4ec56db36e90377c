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
 * 31–40 MiB: kept. A 1 MiB semi-space instead of 4 changes nothing measurable (64.9 MiB after the
 * side-by-side workload either way, restart peak 102 against 99 MiB; 3 alternated runs).
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
 * of peak: `janus run` keeps the JIT. --no-turbofan (Maglev kept) saves nothing measurable at
 * rest (101 against 98 MiB) and is not kept either.
 *
 * What a big poll's peak was made of, then (sampled every 50 ms): ~95 MiB before it (node, the
 * modules, the JIT's code), V8's old generation left to grow to 3-4 times what was live before it
 * collected (the live set after the poll: 16 MiB), and ~30 MiB that glibc's malloc kept after the
 * fetch (isomorphic-git inflates each object with pako, whose 64 KiB windows and output buffers,
 * freed, left holes in the main heap that malloc can only give back from its top). So `janus run`
 * also gets:
 * - --heap-growing-percent=50: after each full collection the old generation may grow by half of
 *   what is live (at least V8's 8 MiB step) before the next. Poll peak, 3 alternated runs each,
 *   with the malloc setting below: 130/132/134 MiB against 189/183/168 without; CPU 6.1/8.2/7.4 s
 *   against 5.4/8.0/7.2 s, within the spread (25 % gave 127-129 MiB, for more collections).
 * - MALLOC_MMAP_THRESHOLD_=32768 (environment, RUN_ENVIRONMENT): allocations of 32 KiB and more
 *   get pages of their own, returned to the system when freed, instead of glibc's default of
 *   raising that threshold to the largest block freed so far (up to 32 MiB). Without it the
 *   growing flag alone left the peak at 152-163 MiB. With run's flags it also saves ~5 MiB at
 *   rest (90 against 95 MiB after the side-by-side workload, CPU within the spread on every
 *   controller path, 3 alternated runs); the controller with its five flags gains nothing from
 *   it (64.4 MiB either way), so only `janus run` sets it. A setting of the user's own (or any
 *   GLIBC_TUNABLES) is left as it is; musl ignores it.
 * On the controller's paths (npm run bench -- flags, medians of 3 alternated runs, 2026-11-26),
 * these two against the semi-space flag alone: resident 30 s after the side-by-side workload 90
 * against 97 MiB, its CPU 1.55 s either way; the 256-change transaction Committed in 4.2 against
 * 4.5 s, 0.82 against 0.62 s of CPU; the restart over 10,000 finished Transactions ready in 6.0 s
 * either way, 1.96 against 1.55 s of CPU (the collections), peak 117 against 126 MiB. Kept.
 * (The poll's live set is smaller too: its directories wait as JSON text, held-transaction.ts.)
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
export const RUN_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=50'];

/** `janus run`'s environment: glibc's malloc gives big blocks back when they are freed (above). */
export const RUN_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '32768' };

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

/** The environment `janus <command>` starts with, besides what it was given. */
export function environmentFor(command: string | undefined): Readonly<Record<string, string>> {
  return command === 'run' ? RUN_ENVIRONMENT : {};
}

/**
 * What of environmentFor(command) a process started with `env` lacks. glibc reads its malloc
 * settings once, at start: a user's own (the same variable, or GLIBC_TUNABLES) wins.
 */
export function missingEnvironment(
  command: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  if (env.GLIBC_TUNABLES !== undefined) return {};
  return Object.fromEntries(
    Object.entries(environmentFor(command)).filter(([name]) => env[name] === undefined),
  );
}
