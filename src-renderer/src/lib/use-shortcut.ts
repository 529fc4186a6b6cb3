import { useEffect } from 'react';

/** A single-key shortcut that stays out of the way while the person is typing. */
export function useShortcut(key: string, action: () => void): void {
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.key !== key || event.metaKey || event.ctrlKey || event.altKey) return;
      const target = event.target as HTMLElement | null;
      if (target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)))
        return;
      event.preventDefault();
      action();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [key, action]);
}
