/**
 * Told whenever a credential stops being good (a key revoked, a member removed, a sign-out),
 * so that what was let in with it earlier (an open event stream) is looked at again at once.
 * On a team server a change is also sent to every other process (server/event-relay.ts), and
 * the change's answer waits until it has been sent: the others hear of it before any event a
 * later request causes.
 */
export class CredentialChanges {
  private readonly listeners = new Set<() => void>();
  private readonly relays = new Set<() => Promise<void>>();

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Where a change made here goes beyond this process. */
  relayWith(send: () => Promise<void>): () => void {
    this.relays.add(send);
    return () => this.relays.delete(send);
  }

  /** A credential ended in this process: its streams here at once, then every other process's. */
  async notify(): Promise<void> {
    this.heard();
    await Promise.all([...this.relays].map((send) => send()));
  }

  /** A credential ended in another process of the same database. */
  heard(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
