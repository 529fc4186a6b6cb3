/**
 * Long work on the server's thread (reading GBs of history) hands the event loop a turn once it
 * has held it for `ms`, so a request or a timer waits at most about that long behind it. A check
 * costs one `performance.now()`; a handed-over turn one `setImmediate`.
 */
export class Turns {
  private since = performance.now();

  constructor(private readonly ms: number) {}

  /** Resolves at once while the time since the last turn is under `ms`, else after a turn. */
  async pause(): Promise<void> {
    if (performance.now() - this.since < this.ms) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/** How long the importer holds the event loop between turns: a fifth of the 50 ms stall target. */
export const IMPORT_TURN_MS = 10;
