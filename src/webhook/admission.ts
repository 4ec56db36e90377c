/**
 * How many webhook requests are served at once. The webhook faces the Internet and every request
 * is unauthenticated until its whole body has been hashed, so each one in flight costs memory
 * (up to the kept body) and a socket. A full house is not left to whoever came first: a new
 * request displaces the oldest one in flight that has already had `shedAfterMs`, so slow senders
 * cannot hold every place while a Git host's delivery (a few KiB, done in milliseconds) waits.
 */
export interface AdmissionOptions {
  readonly maxInFlight: number;
  /** A request in flight this long may be displaced by a new one when every place is taken. */
  readonly shedAfterMs: number;
  readonly now?: () => number;
}

export interface Admitted {
  /** Frees the place. Idempotent. */
  release(): void;
}

interface Entry {
  readonly since: number;
  readonly shed: () => void;
}

export class Admission {
  readonly #opts: AdmissionOptions;
  readonly #inFlight = new Set<Entry>();

  constructor(opts: AdmissionOptions) {
    this.#opts = opts;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * A place for a new request, or undefined when every place is taken by requests younger than
   * `shedAfterMs`. `shed` is called if this request is later displaced: it must answer and close.
   */
  admit(shed: () => void): Admitted | undefined {
    const now = (this.#opts.now ?? Date.now)();
    if (this.#inFlight.size >= this.#opts.maxInFlight) {
      const oldest = this.#inFlight.values().next().value; // a Set iterates in insertion order
      if (!oldest || now - oldest.since < this.#opts.shedAfterMs) return undefined;
      this.#inFlight.delete(oldest);
      oldest.shed();
    }
    const entry: Entry = { since: now, shed };
    this.#inFlight.add(entry);
    return { release: () => void this.#inFlight.delete(entry) };
  }
}
