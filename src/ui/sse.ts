/**
 * Server-Sent Events: the page opens one stream per view and the server writes to it as the
 * watches report; the page never polls. A stream whose reader is slow is ended rather than
 * buffered without bound (the page reconnects and gets a fresh snapshot).
 */
import type { ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './access.ts';

/** Past this much unsent output the reader is not keeping up: end the stream. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export class EventStream {
  readonly #res: ServerResponse;
  #closed = false;
  readonly #onClose: (() => void)[] = [];

  constructor(res: ServerResponse) {
    this.#res = res;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
    });
    // The browser retries a dropped stream after this long.
    res.write('retry: 2000\n\n');
    res.on('close', () => this.#end());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One event; its data is JSON on one line. */
  send(event: string, data: unknown): void {
    if (this.#closed) return;
    this.#res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (this.#res.writableLength > MAX_BUFFERED_BYTES) this.close();
  }

  onClose(fn: () => void): void {
    if (this.#closed) fn();
    else this.#onClose.push(fn);
  }

  close(): void {
    if (!this.#closed) this.#res.end();
    this.#end();
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const fn of this.#onClose.splice(0)) fn();
  }
}
