/**
 * Hands the event loop a turn: resolves once the loop has run its timers and polled for I/O
 * (requests, replies, a worker's messages). One `setImmediate` is not enough: queued from an
 * I/O callback (a file read or a request completing), it runs in the same round of the loop,
 * before the timers and before the next poll, so the work before it and after it would hold them
 * as one. The second `setImmediate`, queued from the check phase, runs only after a whole round.
 */
export async function handOverTurn(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Long work on the server's thread (reading GBs of history) hands the event loop a turn once it
 * has held it for `ms`, so a request or a timer waits at most about that long behind it. A check
 * costs one `performance.now()`; a handed-over turn a round of the loop.
 */
export class Turns {
  private since = performance.now();

  constructor(private readonly ms: number) {}

  /** Resolves at once while the time since the last turn is under `ms`, else after a turn. */
  async pause(): Promise<void> {
    if (performance.now() - this.since < this.ms) return;
    await handOverTurn();
    this.since = performance.now();
  }
}

/** How long the importer holds the event loop between turns: a fifth of the 50 ms stall target. */
export const IMPORT_TURN_MS = 10;
