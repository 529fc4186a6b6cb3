import type { SessionEvent } from '../../src-shared/sessions.js';

export interface BusEvent {
  /** `<epoch>-<n>`: increasing within one run of the server. */
  id: string;
  workspaceId: string;
  sessionId: string | null;
  event: SessionEvent;
}

type Listener = (event: BusEvent) => void;

/**
 * Live changes to sessions, in the order they became durable. The last `capacity` events
 * are kept so a client that reconnects with Last-Event-ID can catch up; one that fell
 * further behind (or last connected to an earlier run of the server) gets a reset.
 */
export class EventBus {
  private readonly epoch = Date.now().toString(36);
  /** A ring: event number n (from 1) is at (n - 1) % capacity, so publishing never shifts it. */
  private readonly recent: BusEvent[] = [];
  private readonly listeners = new Set<Listener>();
  private counter = 0;

  constructor(private readonly capacity = 10_000) {}

  publish(workspaceId: string, event: SessionEvent): void {
    this.counter += 1;
    const entry: BusEvent = {
      id: `${this.epoch}-${this.counter}`,
      workspaceId,
      sessionId: 'sessionId' in event ? event.sessionId : null,
      event,
    };
    this.recent[(this.counter - 1) % this.capacity] = entry;
    for (const listener of this.listeners) listener(entry);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Events after `lastEventId`, or null when they can no longer be replayed exactly
   * (another server run, or older than what is kept).
   */
  since(lastEventId: string): BusEvent[] | null {
    const match = /^([0-9a-z]+)-(\d{1,15})$/.exec(lastEventId);
    const seen = Number(match?.[2]);
    if (match?.[1] !== this.epoch || seen > this.counter) return null;
    const oldest = this.counter - this.recent.length + 1;
    if (seen + 1 < oldest) return null;
    const events: BusEvent[] = [];
    for (let n = seen + 1; n <= this.counter; n += 1)
      events.push(this.recent[(n - 1) % this.capacity] as BusEvent);
    return events;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }
}
