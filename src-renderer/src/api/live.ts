import { useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState } from 'react';
import { SessionEventSchema } from '../../../src-shared/sessions';
import { keys } from './queries';

const EVENT_TYPES = [
  'session.created',
  'session.updated',
  'message.added',
  'tasks.changed',
  'reset',
] as const;

/**
 * Listens to the workspace's server-sent events and refreshes what they touch. The browser's
 * EventSource reconnects by itself and sends Last-Event-ID, so nothing is missed; a `reset`
 * (events too old to replay) refreshes everything. Returns whether the stream is connected,
 * so polling can slow down while it is.
 */
export function useLiveEvents(organizationId: string): boolean {
  const client = useQueryClient();
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const source = new EventSource(`/api/events?organizationId=${encodeURIComponent(organizationId)}`);
    const onEvent = (raw: MessageEvent<string>) => {
      const parsed = SessionEventSchema.safeParse(JSON.parse(raw.data));
      if (!parsed.success) return;
      const event = parsed.data;
      if (event.type === 'reset') {
        void client.invalidateQueries();
        return;
      }
      void client.invalidateQueries({ queryKey: keys.sessions(organizationId) });
      void client.invalidateQueries({ queryKey: keys.session(event.sessionId) });
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(source.readyState === EventSource.OPEN);
    return () => {
      source.close();
      setConnected(false);
    };
  }, [client, organizationId]);
  return connected;
}

export const LiveContext = createContext(false);

/** Whether live events are connected (so views can poll less). */
export function useLive(): boolean {
  return useContext(LiveContext);
}
