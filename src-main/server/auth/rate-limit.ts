import type { Clock } from '../../clock.js';

/**
 * Counts failures per key in a fixed window. Once a key reaches its limit it is refused until
 * its window ends, even when the next attempt would have been right. The desktop keeps the
 * counts in memory (`MemoryFailureLimiter`: one process); a team server keeps them in its
 * database (store-postgres/failure-windows.ts), so that every process refuses alike.
 */
export interface FailureLimiter {
  /** Seconds to wait before trying again, or 0 when the key may try now. */
  retryAfter(key: string): Promise<number>;
  fail(key: string): Promise<void>;
  reset(key: string): Promise<void>;
}

/** How many failures a window takes, and how long it lasts. */
export interface FailureLimit {
  max: number;
  windowMs: number;
}

/** Invalid API keys, per client: 30 a minute. */
export const BAD_KEY_LIMIT: FailureLimit = { max: 30, windowMs: 60_000 };

export class MemoryFailureLimiter implements FailureLimiter {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>();

  constructor(
    private readonly limit: FailureLimit,
    private readonly clock: Clock,
  ) {}

  async retryAfter(key: string): Promise<number> {
    const now = this.clock.now().getTime();
    const window = this.windows.get(key);
    if (!window || window.resetAt <= now) return 0;
    return window.failures >= this.limit.max ? Math.ceil((window.resetAt - now) / 1000) : 0;
  }

  async fail(key: string): Promise<void> {
    const now = this.clock.now().getTime();
    const window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      this.windows.set(key, { failures: 1, resetAt: now + this.limit.windowMs });
      this.prune(now);
    } else {
      window.failures += 1;
    }
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  /** Keeps memory bounded when many different keys fail. */
  private prune(now: number): void {
    if (this.windows.size < 10_000) return;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

/**
 * Keys remembered for a while (the clients an account signed in from): in memory on the
 * desktop, in the team database's `failure_windows` on a team server.
 */
export interface Remembered {
  remember(key: string): Promise<void>;
  knows(key: string): Promise<boolean>;
}

export class MemoryRemembered implements Remembered {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly keepMs: number,
    private readonly clock: Clock,
  ) {}

  async remember(key: string): Promise<void> {
    const now = this.clock.now().getTime();
    this.until.delete(key);
    this.until.set(key, now + this.keepMs);
    // Oldest first (re-inserted on each sign-in): the first still kept ends the pruning.
    if (this.until.size > 10_000) {
      for (const [old, end] of this.until) {
        if (end > now && this.until.size <= 10_000) break;
        this.until.delete(old);
      }
    }
  }

  async knows(key: string): Promise<boolean> {
    return (this.until.get(key) ?? 0) > this.clock.now().getTime();
  }
}

/**
 * The client a limit is kept for. Every loopback address (127.0.0.0/8, ::1) is one client:
 * they are all this machine, so another 127.x source address must not escape a limit.
 */
export function clientKey(ip: string): string {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return v4.startsWith('127.') || ip === '::1' ? 'loopback' : ip;
}

/**
 * Whether a browser marked the request as sent by another site (a page on another port of
 * localhost included). Such requests never count towards a limit: otherwise any web page
 * could lock out the scripts and people on this machine.
 */
export function isCrossSite(headers: Record<string, string | string[] | undefined>): boolean {
  const site = headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}
