/**
 * The resourceVersions this process has read or written per Transaction. A version we have
 * already moved past (read before, or written before a later write of ours) is stale: the
 * informer's watch lags behind our own writes, and acting on it would repeat steps.
 * resourceVersions are opaque, so they are compared by identity, never by order.
 */
const KEEP = 64;

interface History {
  latest: string | undefined;
  past: Set<string>;
  /** Versions reconciled from since our latest write: stale once we write again. */
  readSinceWrite: Set<string>;
}

export class WriteHistory {
  readonly #byKey = new Map<string, History>();

  #of(key: string): History {
    let h = this.#byKey.get(key);
    if (!h) {
      h = { latest: undefined, past: new Set(), readSinceWrite: new Set() };
      this.#byKey.set(key, h);
    }
    return h;
  }

  #remember(h: History, rv: string): void {
    h.past.add(rv);
    if (h.past.size > KEEP) h.past.delete(h.past.values().next().value as string);
  }

  /** A version we reconciled from: once we write a newer one, it is stale. */
  read(key: string, rv: string | undefined): void {
    if (!rv) return;
    const h = this.#of(key);
    if (h.latest !== rv && !h.past.has(rv)) h.readSinceWrite.add(rv);
  }

  wrote(key: string, rv: string | undefined): void {
    if (!rv) return;
    const h = this.#of(key);
    for (const r of h.readSinceWrite) if (r !== rv) this.#remember(h, r);
    h.readSinceWrite.clear();
    if (h.latest) this.#remember(h, h.latest);
    h.latest = rv;
    h.past.delete(rv);
  }

  isStale(key: string, rv: string | undefined): boolean {
    const h = this.#byKey.get(key);
    return rv !== undefined && h !== undefined && h.latest !== undefined && rv !== h.latest && h.past.has(rv);
  }

  forget(key: string): void {
    this.#byKey.delete(key);
  }
}
