export interface ReceivedEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

/** A real server-sent-events client over fetch: collects events until closed. */
export async function openEventStream(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const events: ReceivedEvent[] = [];
  let closed = false;
  const done = (async () => {
    if (!response.ok || !response.body) return;
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            if (colon === -1) continue;
            fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
          }
          if (fields.data !== undefined) {
            events.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data) });
          }
        }
      }
    } catch {
      // Aborted by close(), or the server ended the stream.
    } finally {
      closed = true;
    }
  })();
  return {
    response,
    events,
    isClosed: () => closed,
    async close() {
      controller.abort();
      await done;
    },
  };
}
