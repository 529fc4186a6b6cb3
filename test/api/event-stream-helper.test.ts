import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStream } from '../helpers/events.js';

// The tests' own event-stream client reads what a server sends as a browser would, and a
// malformed event fails the test that gets it instead of vanishing.
let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

/** A server that sends `chunks` as an event stream, one write each, and keeps it open. */
async function streaming(chunks: string[]): Promise<string> {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) response.write(chunk);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('openEventStream', () => {
  it('joins data lines with a newline, takes CRLF and CR line ends, and skips comments', async () => {
    const url = await streaming([
      ': keep-alive\n\n',
      'id: 1\nevent: session\ndata: {"a":\ndata: 1}\n\n',
      'id: 2\r\nevent: session\r\ndata:{"b":2}\r',
      '\n\r\n',
      'data: ["line one",\ndata:  "line two"]\r\r',
    ]);
    const stream = await openEventStream(url);
    try {
      await expect.poll(() => stream.events.length).toBe(3);
      expect(stream.events).toEqual([
        { id: '1', event: 'session', data: { a: 1 } },
        { id: '2', event: 'session', data: { b: 2 } },
        { id: undefined, event: 'message', data: ['line one', 'line two'] },
      ]);
    } finally {
      server?.closeAllConnections();
    }
    await stream.close();
  });

  it('fails the test on an event whose data is not JSON, whole as the lines joined', async () => {
    const url = await streaming(['data: {"ok":true}\n\n', 'data: {not\ndata: json\n\n']);
    const stream = await openEventStream(url);
    await expect
      .poll(() => {
        try {
          return stream.events.length;
        } catch (err) {
          return (err as Error).message;
        }
      })
      .toMatch(/^a server-sent event whose data is not JSON .*: "\{not\\njson"$/u);
    server?.closeAllConnections();
    await expect(stream.close()).rejects.toThrow(/not JSON/u);
  });
});
