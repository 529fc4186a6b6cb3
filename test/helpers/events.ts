export interface ReceivedEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

/**
 * Reads an event stream's lines as the HTML standard's event-stream parser does: lines end with
 * CRLF, LF or CR; `:` starts a comment; one space after a field's colon is dropped; `data` lines
 * are joined with "\n"; a blank line dispatches the event, if it has data.
 */
export function createEventParser(
  dispatch: (event: { id: string | undefined; event: string | undefined; data: string }) => void,
) {
  let buffer = '';
  let data: string[] = [];
  let event: string | undefined;
  let id: string | undefined;

  function line(text: string): void {
    if (text === '') {
      if (data.length > 0) dispatch({ id, event, data: data.join('\n') });
      data = [];
      event = undefined;
      id = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  }

  // A line that ended with CR: an LF arriving next (in this chunk or the next) is the same end.
  let afterCR = false;
  return (chunk: string): void => {
    buffer += chunk;
    for (;;) {
      if (afterCR && buffer.startsWith('\n')) buffer = buffer.slice(1);
      if (buffer !== '') afterCR = false;
      const end = buffer.search(/[\r\n]/u);
      if (end === -1) return;
      line(buffer.slice(0, end));
      afterCR = buffer[end] === '\r';
      buffer = buffer.slice(end + 1);
    }
  };
}

/**
 * A real server-sent-events client over fetch: collects events until closed. Every event's
 * data must be JSON: one that is not fails the test, at the next read of `events` and at
 * `close()`, rather than being dropped.
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const events: ReceivedEvent[] = [];
  let malformed: Error | null = null;
  let closed = false;
  const parse = createEventParser(({ id, event, data }) => {
    try {
      events.push({ id, event: event ?? 'message', data: JSON.parse(data) as unknown });
    } catch (err) {
      malformed ??= new Error(
        `a server-sent event whose data is not JSON (${(err as Error).message}): ${JSON.stringify(data).slice(0, 300)}`,
      );
    }
  });
  const done = (async () => {
    if (!response.ok || !response.body) return;
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        parse(decoder.decode(value, { stream: true }));
      }
    } catch {
      // Aborted by close(), or the server ended the stream: isClosed() tells the tests that care.
    } finally {
      closed = true;
    }
  })();
  const check = () => {
    if (malformed) throw malformed;
  };
  return {
    response,
    get events(): ReceivedEvent[] {
      check();
      return events;
    },
    isClosed: () => closed,
    async close() {
      controller.abort();
      await done;
      check();
    },
  };
}
