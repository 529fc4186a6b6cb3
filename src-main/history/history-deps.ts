import type { Clock } from '../clock.js';
import type { EventBus } from '../events/event-bus.js';
import type { Storage } from '../store/storage.js';

/** What importing history needs of the server (or of the command that opened the data directory). */
export interface HistoryDeps {
  storage: Storage;
  clock: Clock;
  /** The running server's live events; absent when the command opens the data directory itself. */
  events?: EventBus | undefined;
  /**
   * Sessions a run of Session Desk's own is resuming: that run's output is their record, so
   * what its CLI writes to their files meanwhile is not imported (see run-holds.ts).
   */
  holds?: ReadonlySet<string> | undefined;
}
