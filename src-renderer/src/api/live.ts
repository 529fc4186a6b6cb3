import { useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useRef, useState } from 'react';
import { SessionEventSchema, type SessionEvent } from '../../../src-shared/sessions';
import { keys } from './queries';

const EVENT_TYPES = [
  'session.created',
  'session.updated',
  'message.added',
  'tasks.changed',
  'approval.created',
  'approval.decided',
  'reset',
] as const;

/**
 * Listens to the workspace's server-sent events and refreshes what they touch. The browser's
 * EventSource reconnects by itself and sends Last-Event-ID, so nothing is missed; a `reset`
 * (events too old to replay) refreshes everything. Returns whether the stream is connected,
 * so polling can slow down while it is. `onEvent` hears each event too (to notify).
 */
export function useLiveEvents(organizationId: string, onEvent?: (event: SessionEvent) => void): boolean {
  const client = useQueryClient();
  const [connected, setConnected] = useState(false);
  // The latest listener, without reconnecting the stream each time it changes.
  const listener = useRef(onEvent);
  useEffect(() => {
    listener.current = onEvent;
  }, [onEvent]);
  useEffect(() => {
    const source = new EventSource(`/api/events?organizationId=${encodeURIComponent(organizationId)}`);
    const handle = (raw: MessageEvent<string>) => {
      const parsed = SessionEventSchema.safeParse(JSON.parse(raw.data));
      if (!parsed.success) return;
      const event = parsed.data;
      listener.current?.(event);
      if (event.type === 'reset') {
        void client.invalidateQueries();
        return;
      }
      if (event.type === 'approval.created' || event.type === 'approval.decided') {
        void refresh(client, keys.approvals(organizationId));
      }
      void refresh(client, keys.sessions(organizationId));
      void refresh(client, keys.session(event.sessionId));
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, handle);
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(source.readyState === EventSource.OPEN);
    return () => {
      source.close();
      setConnected(false);
    };
  }, [client, organizationId]);
  return connected;
}

/**
 * Fetches again what an event changed. A query's first fetch still on its way may have been
 * answered before the event (a session that finished while its page loaded): invalidating alone
 * would keep that answer, since TanStack Query lets a fetch without data run on rather than start
 * another. Such a fetch is cancelled first, so the refetch asks anew.
 */
export async function refresh(client: QueryClient, queryKey: QueryKey): Promise<void> {
  await client.cancelQueries({
    queryKey,
    predicate: (query) => query.state.data === undefined && query.state.fetchStatus === 'fetching',
  });
  await client.invalidateQueries({ queryKey });
}

export const LiveContext = createContext(false);

/** Whether live events are connected (so views can poll less). */
export function useLive(): boolean {
  return useContext(LiveContext);
}
