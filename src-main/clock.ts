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

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
