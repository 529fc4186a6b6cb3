import { useEffect, useState, useSyncExternalStore } from 'react';
import { MessagesPageResponseSchema } from '../../../../src-shared/sessions';
import { api } from '../../api/client';
import { TranscriptLoader, type TranscriptView } from './transcript-loader';

/**
 * A session's transcript, read in pages (see TranscriptLoader). `total` is the message count
 * the session's summary gives; each time it grows (live events and polling refresh the
 * summary), the new messages are read.
 */
export type TranscriptPages = TranscriptView & { readEarlier: () => void; retry: () => void };

export function useTranscriptPages(
  sessionId: string,
  total: number | undefined,
  /** A message to open the transcript at (a search hit), else its end. */
  from?: number,
): TranscriptPages {
  const [state, setState] = useState(() => ({ sessionId, from, loader: loaderFor(sessionId, from) }));
  let current = state.loader;
  if (state.sessionId !== sessionId || state.from !== from) {
    // Another session, or another place in it: start afresh.
    current = loaderFor(sessionId, from);
    setState({ sessionId, from, loader: current });
  }
  const view = useSyncExternalStore(current.subscribe, current.getView);
  useEffect(() => {
    if (total !== undefined) current.known(total);
  }, [current, total]);
  return { ...view, readEarlier: current.readEarlier, retry: current.retry };
}

/** Messages read before the one a transcript opens at: the context, and a tool output's call. */
const CONTEXT_BEFORE = 10;

function loaderFor(sessionId: string, from: number | undefined): TranscriptLoader {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/messages`;
  return new TranscriptLoader(
    (after, limit) => api.get(`${path}?after=${after}&limit=${limit}`, MessagesPageResponseSchema),
    from === undefined ? undefined : Math.max(0, from - CONTEXT_BEFORE),
  );
}
