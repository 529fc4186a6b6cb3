import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Cuts a request whose body trickles in (one byte every few seconds holds a connection, and
 * a slot, for as long as the client likes): after `ms` without the whole body, 408 and the
 * connection is closed. The CLI's import through a running server streams an export of any
 * size, so that route (which needs the admin token) is left to Node's own, longer limit.
 */
export function bodyTimeout(ms: number) {
  return async function limitBodyTime(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const raw = request.raw;
    const hasBody =
      raw.headers['content-length'] !== undefined || raw.headers['transfer-encoding'] !== undefined;
    if (!hasBody || raw.complete || request.url.startsWith('/api/admin/import')) return;
    const timer = setTimeout(() => {
      if (raw.complete) return;
      const socket = raw.socket;
      if (!reply.raw.headersSent) {
        const body = JSON.stringify({
          error: { code: 'bad_request', message: 'The request took too long to arrive' },
        });
        reply.raw.writeHead(408, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
          'x-content-type-options': 'nosniff',
          'cache-control': 'no-store',
          connection: 'close',
        });
        reply.raw.end(body, () => socket.destroy());
      } else {
        socket.destroy();
      }
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    raw.once('end', clear);
    raw.once('close', clear);
    // Answered before the body was all there (a 401, say): the rest must still come in time.
    reply.raw.once('finish', () => {
      if (raw.complete) clear();
    });
  };
}
