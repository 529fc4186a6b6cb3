import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { refresh } from '../../src-renderer/src/api/live';

/**
 * What a live event does to the dashboard's queries, with TanStack Query itself: a session that
 * finishes while its page is loading must not stay "active" on the page.
 */
describe('a live event refreshes what it changed', () => {
  it('even while the first fetch of it, answered before the change, is still on its way', async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    let status = 'active';
    let requests = 0;
    let answerLater: (() => void) | undefined;
    const observer = new QueryObserver(client, {
      queryKey: ['session', 'ses_1', 'summary'],
      // The server reads the session when the request arrives; the answer reaches the page later.
      queryFn: async ({ signal }) => {
        const read = status;
        requests += 1;
        if (requests === 1) await new Promise<void>((resolve) => (answerLater = resolve));
        signal.throwIfAborted();
        return read;
      },
    });
    const seen: (string | undefined)[] = [];
    const unsubscribe = observer.subscribe((result) => seen.push(result.data));
    await expect.poll(() => answerLater !== undefined).toBe(true);
    // The session finishes, and its event arrives, before the first answer does.
    status = 'completed';
    const refreshing = refresh(client, ['session', 'ses_1']);
    answerLater!();
    await refreshing;
    await expect.poll(() => observer.getCurrentResult().data).toBe('completed');
    expect(seen.filter((data) => data !== undefined).at(-1)).toBe('completed');
    expect(requests).toBe(2);
    unsubscribe();
    client.clear();
  });

  it('refetches a query that has its data, once', async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    let fetches = 0;
    const observer = new QueryObserver(client, {
      queryKey: ['sessions', 'org_1'],
      queryFn: () => {
        fetches += 1;
        return Promise.resolve(fetches);
      },
    });
    const unsubscribe = observer.subscribe(() => {});
    await expect.poll(() => observer.getCurrentResult().data).toBe(1);
    await refresh(client, ['sessions', 'org_1']);
    expect(observer.getCurrentResult().data).toBe(2);
    expect(fetches).toBe(2);
    unsubscribe();
    client.clear();
  });
});
