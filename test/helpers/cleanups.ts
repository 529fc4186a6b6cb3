import { afterEach } from 'vitest';

/**
 * What the current test leaves behind (servers, folders), undone after it, the last first,
 * whatever the outcome. Call once at the top of a test file; returns the function that adds one.
 */
export function useCleanups(): (cleanup: () => unknown) => void {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => void cleanups.push(cleanup);
}
