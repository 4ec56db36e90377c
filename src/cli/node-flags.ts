/**
 * Node flags every long-running janus process starts with: the Dockerfile's ENTRYPOINT and
 * bin/janus's #! line (tests check both), the demo's main job, and the processes tests start.
 *
 * Memory is what Janus gave away against the Go operator, so V8 is told to favour it:
 * - 4 MB semi-spaces: V8 sizes its young generation from the machine's memory (128 MB on a
 *   24 GiB node, mostly empty), and a controller allocates little between bursts.
 * - --optimize-for-size: a heap that grows less eagerly and is given back sooner.
 * Measured on 2026-11-24, same machine, paired runs (test/bench/results): the controller with
 * 10,000 finished Transactions is resident at 103 MiB (was 155 MiB with 16 MB semi-spaces alone,
 * 139 MiB with 4 MB alone); CPU and latency did not move beyond the runs' noise: 50 transactions
 * drained in 8.4 s (was 9.2 s), controller CPU 29 ms per transaction (was 32), an idle poll of a
 * 20,000-commit repository 120 ms of CPU (was 135), one new commit 762 ms (was 732).
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--optimize-for-size'];
