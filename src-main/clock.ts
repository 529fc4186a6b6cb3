/** Time comes from here, never from `new Date()` in the middle of logic, so tests can step it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to. */
export function steppableClock(start: Date | string): Clock & {
  advance(ms: number): void;
  set(to: Date | string): void;
} {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    advance(ms) {
      current += ms;
    },
    set(to) {
      current = new Date(to).getTime();
    },
  };
}

/** What an event is about, for logs read by programs (`--log-format json`). */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  /** Every request and other detail: shown only when asked for (`--log-level debug`). */
  debug?(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
