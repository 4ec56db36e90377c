/**
 * Talking to a bench's worker process (git-poll-worker.ts): a message and its answer, or the
 * worker's exit. A worker that dies (an unexpected error) fails the bench instead of leaving
 * it waiting for ever.
 */
import type { ChildProcess } from 'node:child_process';

/** The worker's next message, or a rejection when it exits first. */
export function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`the bench worker exited (${signal ?? `code ${code}`}) before answering`));
    child.once('exit', exited);
    child.once('message', (reply) => {
      child.off('exit', exited);
      resolve(reply as T);
    });
  });
}

/** Sends `message` and waits for the worker's answer. */
export function ask<T>(child: ChildProcess, message: object): Promise<T> {
  const answer = nextMessage<T>(child);
  child.send(message);
  return answer;
}
