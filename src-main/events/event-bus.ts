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
    this.recent.push(entry);
    if (this.recent.length > this.capacity) this.recent.splice(0, this.recent.length - this.capacity);
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
    const [epoch, n] = lastEventId.split('-');
    const seen = Number(n);
    if (epoch !== this.epoch || !Number.isInteger(seen) || seen < 0 || seen > this.counter) return null;
    const oldest = this.counter - this.recent.length + 1;
    if (seen + 1 < oldest) return null;
    return this.recent.slice(seen + 1 - oldest);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }
}
