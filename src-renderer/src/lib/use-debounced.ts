import { useEffect, useRef } from 'react';

/** Calls `apply(value)` once `value` has stayed the same for `delayMs`. */
export function useDebouncedEffect<T>(value: T, delayMs: number, apply: (value: T) => void): void {
  const latest = useRef(apply);
  useEffect(() => {
    latest.current = apply;
  });
  useEffect(() => {
    const timer = setTimeout(() => latest.current(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
}
