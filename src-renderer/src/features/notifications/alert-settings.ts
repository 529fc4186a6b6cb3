import { useCallback, useSyncExternalStore } from 'react';

/**
 * How this browser tells its person that something happened: a desktop notification when an
 * agent asks, and a sound per kind. Kept in this browser only (localStorage), all off until
 * the person turns them on.
 */
export interface AlertSettings {
  /** Show the browser's notification when an agent asks (needs the browser's permission too). */
  desktop: boolean;
  /** Play a sound when an agent asks. */
  soundNeedsYou: boolean;
  /** Play a sound when a run this tab saw going ends. */
  soundFinished: boolean;
}

const STORAGE_KEY = 'sessiondesk.alerts';
const OFF: AlertSettings = { desktop: false, soundNeedsYou: false, soundFinished: false };

/** What is stored, field by field; anything unreadable counts as off. */
export function readAlertSettings(): AlertSettings {
  let stored: unknown;
  try {
    stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
  } catch {
    stored = null;
  }
  const fields = typeof stored === 'object' && stored !== null ? (stored as Record<string, unknown>) : {};
  return {
    desktop: fields.desktop === true,
    soundNeedsYou: fields.soundNeedsYou === true,
    soundFinished: fields.soundFinished === true,
  };
}

const listeners = new Set<() => void>();
let snapshot: { raw: string | null; settings: AlertSettings } = { raw: null, settings: OFF };

function current(): AlertSettings {
  const raw = localStorage.getItem(STORAGE_KEY);
  if (raw !== snapshot.raw) snapshot = { raw, settings: readAlertSettings() };
  return snapshot.settings;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Another tab's change arrives as a storage event.
  window.addEventListener('storage', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', listener);
  };
}

/** The settings, kept in step across this browser's tabs, and a way to change some of them. */
export function useAlertSettings(): [AlertSettings, (change: Partial<AlertSettings>) => void] {
  const settings = useSyncExternalStore(subscribe, current);
  const change = useCallback((next: Partial<AlertSettings>) => {
    localStorage.setItem(STORAGE_KEY, JSON.stringify({ ...current(), ...next }));
    for (const listener of listeners) listener();
  }, []);
  return [settings, change];
}
