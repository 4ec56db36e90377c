/**
 * What one render may cost (docs/sources.md, "The sandbox"): the tool's wall time, memory and
 * output, and the checkout it reads. Whoever can push to the watched branch controls the input;
 * these bound what one source can take from the others.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

export interface RenderLimits {
  /** Wall time of one tool run, in milliseconds; then its process group is killed. */
  readonly timeoutMs: number;
  /**
   * Memory the tool may take, in bytes: its resident memory, read from /proc every
   * RSS_POLL_MS, kills it past this; GOMEMLIMIT is this too, so Go's garbage collector works hard
   * before either bound; and its address space (RLIMIT_AS, which the kernel enforces at once)
   * is addressSpaceLimit(this), so an allocation faster than the polling still fails.
   */
  readonly memoryBytes: number;
  /** Bytes the tool may write to stdout (the rendered YAML); past it, it is killed. */
  readonly maxOutputBytes: number;
  /** Renders running at once in the process, over all sources. */
  readonly concurrency: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  timeoutMs: 60_000,
  memoryBytes: 512 * MiB,
  maxOutputBytes: 16 * MiB,
  concurrency: 2,
};

/**
 * Address space a Go program of ours maps before its heap grows: kustomize 5.8 and helm 4.3, built
 * with Go 1.26, start under `ulimit -v` of 740 and 800 MiB (and map ~1.3 GiB when unbounded:
 * the runtime reserves less when it must).
 */
export const GO_RESERVED_ADDRESS_SPACE = 1024 * MiB;

/**
 * The address-space limit of a tool allowed `memoryBytes`: Go's reservation and twice the heap
 * (a Go heap maps about twice its live size between collections). Measured with helm 4.3
 * doubling a string: at 2 GiB (memoryBytes 512 MiB) a render peaking at 560 MiB resident passes
 * and one at twice that fails; a chart render of ordinary size peaks under 100 MiB.
 */
export function addressSpaceLimit(memoryBytes: number): number {
  return GO_RESERVED_ADDRESS_SPACE + 2 * memoryBytes;
}

/** How often a running tool's resident memory is read. */
export const RSS_POLL_MS = 200;

/** Bytes of the tool's stderr kept: its last lines, where Go tools put the error. */
export const STDERR_TAIL_BYTES = 16 * KiB;

/** What one checkout of a commit may write (checkout.ts). */
export interface CheckoutLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
  readonly maxFileBytes: number;
  readonly maxLinkHops: number;
}

export const CHECKOUT_LIMITS: CheckoutLimits = {
  /** Files (and folders) written. */
  maxEntries: 20_000,
  /** Bytes written, all files together. */
  maxBytes: 128 * MiB,
  /** Bytes of one file. */
  maxFileBytes: 16 * MiB,
  /** Symbolic links followed to reach one file (a link to a link …). */
  maxLinkHops: 8,
};

/** The most a failure's message keeps of the tool's words. */
export const MAX_FAILURE_MESSAGE = 4 * KiB;
