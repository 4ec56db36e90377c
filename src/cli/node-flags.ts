/**
 * Node flags every long-running janus process starts with: the Dockerfile's ENTRYPOINT and
 * bin/janus's #! line (tests check both), the demo's main job, and the processes tests start.
 *
 * V8 sizes its young generation from the machine's memory: on a 24 GiB node it grew to 128 MB
 * during the controller's first LIST of 10,000 Transactions and kept it, although 30 MB of the
 * heap was in use. 16 MB semi-spaces (V8's default for years) keep resident memory flat whatever
 * the node, at no measurable cost: the controller used 0.85–0.88 s of CPU to drain 50
 * transactions with 16 MB semi-spaces, 0.83–0.97 s with 64 MB.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
