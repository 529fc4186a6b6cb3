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

export function useTranscriptPages(sessionId: string, total: number | undefined): TranscriptPages {
  const [state, setState] = useState(() => ({ sessionId, loader: loaderFor(sessionId) }));
  let current = state.loader;
  if (state.sessionId !== sessionId) {
    // Another session in the same page: start afresh.
    current = loaderFor(sessionId);
    setState({ sessionId, loader: current });
  }
  const view = useSyncExternalStore(current.subscribe, current.getView);
  useEffect(() => {
    if (total !== undefined) current.known(total);
  }, [current, total]);
  return { ...view, readEarlier: current.readEarlier, retry: current.retry };
}

function loaderFor(sessionId: string): TranscriptLoader {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/messages`;
  return new TranscriptLoader((after, limit) =>
    api.get(`${path}?after=${after}&limit=${limit}`, MessagesPageResponseSchema),
  );
}
