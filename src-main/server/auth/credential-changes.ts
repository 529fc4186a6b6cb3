/**
 * Told whenever a credential stops being good (a key revoked, a member removed, a sign-out),
 * so that what was let in with it earlier (an open event stream) is looked at again at once.
 */
export class CredentialChanges {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
