import { useEffect, useRef } from 'react';

/** Whether a key press is typing into a field, where letters are not shortcuts. */
function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  return (
    !!element && (element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName))
  );
}

/**
 * Single-key shortcuts that stay out of the way while the person is typing, each key to its
 * action; the latest actions are used without listening again.
 */
export function useShortcuts(actions: Record<string, () => void>): void {
  const latest = useRef(actions);
  useEffect(() => {
    latest.current = actions;
  });
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.metaKey || event.ctrlKey || event.altKey || typing(event.target)) return;
      const action = latest.current[event.key];
      if (!action) return;
      event.preventDefault();
      action();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/** A single-key shortcut that stays out of the way while the person is typing. */
export function useShortcut(key: string, action: () => void): void {
  useShortcuts({ [key]: action });
}
