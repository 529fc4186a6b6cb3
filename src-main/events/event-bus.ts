import type { SessionEvent } from '../../src-shared/sessions.js';

/** An event as kept for replay: its JSON, and what streams choose and name it by. */
export interface KeptEvent {
  /** `<epoch>-<n>`: increasing within one run of the server. */
  id: string;
  workspaceId: string;
  sessionId: string | null;
  type: SessionEvent['type'];
  /** The event as JSON, made once for every stream that sends it. */
  data: string;
}

/** An event as published, to the listeners of this process: with the event itself. */
export interface BusEvent extends KeptEvent {
  event: SessionEvent;
  /** Set on an event another server process made and relayed here: it is not relayed again. */
  relayed?: true;
}

type Listener = (event: BusEvent) => void;

/**
 * Live changes to sessions, in the order they became durable. The last `capacity` events,
 * and no more than `maxBytes` of them (an agent's message can be megabytes), are kept so a
 * client that reconnects with Last-Event-ID can catch up; one that fell further behind (or
 * last connected to an earlier run of the server) gets a reset. Only an event's JSON is kept
 * (not the event as well, which would hold as much again, unbudgeted: an import publishes
 * thousands of session summaries).
 */
export class EventBus {
  private readonly epoch = Date.now().toString(36);
  /** A ring: event number n (from 1) is at (n - 1) % capacity, so publishing never shifts it. */
  private readonly recent: Array<KeptEvent | undefined> = [];
  private readonly listeners = new Set<Listener>();
  private counter = 0;
  /** The number of the oldest event still kept, and the bytes of those kept. */
  private oldest = 1;
  private bytes = 0;

  constructor(
    private readonly capacity = 10_000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  publish(workspaceId: string, event: SessionEvent, from?: 'relay'): void {
    this.counter += 1;
    const kept: KeptEvent = {
      id: `${this.epoch}-${this.counter}`,
      workspaceId,
      sessionId: 'sessionId' in event ? event.sessionId : null,
      type: event.type,
      data: JSON.stringify(event),
    };
    const entry: BusEvent = { ...kept, event, ...(from === 'relay' ? { relayed: true as const } : {}) };
    const slot = (this.counter - 1) % this.capacity;
    if (this.counter - this.oldest >= this.capacity) this.forgetOldest();
    this.recent[slot] = kept;
    this.bytes += entry.data.length;
    while (this.bytes > this.maxBytes && this.oldest < this.counter) this.forgetOldest();
    for (const listener of this.listeners) listener(entry);
  }

  private forgetOldest(): void {
    const slot = (this.oldest - 1) % this.capacity;
    this.bytes -= (this.recent[slot] as KeptEvent).data.length;
    this.recent[slot] = undefined;
    this.oldest += 1;
  }

  /** How much is kept, for tests and the benchmark. */
  kept(): { events: number; bytes: number } {
    return { events: this.counter - this.oldest + 1, bytes: this.bytes };
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Events after `lastEventId`, or null when they can no longer be replayed exactly
   * (another server run, or older than what is kept).
   */
  since(lastEventId: string): KeptEvent[] | null {
    const match = /^([0-9a-z]+)-(\d{1,15})$/.exec(lastEventId);
    const seen = Number(match?.[2]);
    if (match?.[1] !== this.epoch || seen > this.counter) return null;
    if (seen + 1 < this.oldest) return null;
    const events: KeptEvent[] = [];
    for (let n = seen + 1; n <= this.counter; n += 1)
      events.push(this.recent[(n - 1) % this.capacity] as KeptEvent);
    return events;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }
}
