import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ErrorCode, ErrorResponse } from '../../src-shared/errors.js';
import type { Logger } from '../clock.js';
import { AppError, type ErrorDetail } from '../errors.js';
import { DataDamagedError } from '../store/errors.js';
import { MessageTooLargeError } from '../store/errors.js';
import { StoreUnavailableError } from '../store/store.js';
import { isDatabaseUnavailable } from '../store-postgres/connect.js';
import { redactUrl } from './security-headers.js';
import { describeValidation } from './validation-messages.js';

function send(
  reply: FastifyReply,
  status: number,
  code: ErrorCode,
  message: string,
  extra: { details?: ErrorDetail[]; requestId?: string } = {},
): FastifyReply {
  const body: ErrorResponse = { error: { code, message, ...extra } };
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** Fastify's own client errors whose messages are safe and useful to repeat. */
const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'payload_too_large',
    message: 'The request body is larger than 1 MiB',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'Send request bodies as application/json',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'bad_request', message: 'The JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'bad_request', message: 'The body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'bad_request' },
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Refusals that are this route's ordinary answer, not a request gone wrong: a signed-out
     * `GET /api/auth/me` is how every signed-out page load learns to show the sign-in. Told at
     * debug, with every request, not at info.
     */
    expectedRefusals?: readonly number[];
  }
}

/** Errors whose refusal the route has told in its own words (a failed sign-in names the account). */
const toldByRoute = new WeakSet<Error>();

/** Marks an error the route has logged already, so that the error handler does not tell it twice. */
export function toldAlready<E extends Error>(err: E): E {
  toldByRoute.add(err);
  return err;
}

/** The one error handler: every error leaves in the same shape, and a 5xx says nothing internal. */
export function registerErrorHandling(app: FastifyInstance, logger: Logger): void {
  /** A refused request in one line: what was asked (the query's secrets redacted) and why not. */
  const refuse = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    code: ErrorCode,
    message: string,
    extra: { details?: ErrorDetail[] } = {},
  ) => {
    const url = redactUrl(request.url);
    const expected = request.routeOptions.config.expectedRefusals?.includes(status) === true;
    const tell = expected ? logger.debug?.bind(logger) : logger.info.bind(logger);
    tell?.(`refused ${request.method} ${url}: ${status} ${message}`, {
      event: 'request.refused',
      method: request.method,
      url,
      status,
      code,
      // The client's address: behind a trusted proxy, the one it forwarded.
      client: request.ip,
    });
    return send(reply, status, code, message, extra);
  };
  /** A failure of ours: the log has what the caller is not told, under the request id they get. */
  const fail = (request: FastifyRequest, what: string, err: unknown) => {
    const error = err instanceof Error ? err : new Error(String(err));
    logger.error(
      `${request.method} ${redactUrl(request.url)} failed (request ${request.id}): ${what}: ${error.message}`,
      {
        event: 'request.failed',
        method: request.method,
        url: redactUrl(request.url),
        requestId: request.id,
        stack: error.stack,
      },
    );
  };
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      if (err.headers) void reply.headers(err.headers);
      const extra = err.details ? { details: err.details } : {};
      if (toldByRoute.has(err)) return send(reply, err.status, err.code, err.message, extra);
      return refuse(request, reply, err.status, err.code, err.message, extra);
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const { message, details } = describeValidation(err.validationContext ?? 'body', err.validation);
      return refuse(request, reply, 400, 'validation_failed', message, { details });
    }
    const known = err.code ? FASTIFY_CLIENT_ERRORS[err.code] : undefined;
    if (known) return refuse(request, reply, known.status, known.code, known.message ?? err.message);
    if (
      err instanceof SyntaxError ||
      (err.statusCode === 400 && /prototype|constructor/u.test(err.message))
    ) {
      // JSON.parse and secure-json-parse (__proto__ / constructor keys) failures.
      return refuse(request, reply, 400, 'bad_request', 'The body is not acceptable JSON');
    }
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return refuse(request, reply, err.statusCode, 'bad_request', 'The request could not be processed');
    }
    if (err instanceof MessageTooLargeError) {
      return refuse(request, reply, 413, 'payload_too_large', err.message);
    }
    if (err instanceof DataDamagedError) {
      // The file is named in the server's log only; the caller learns what to do.
      fail(request, 'data damaged', err);
      return send(
        reply,
        500,
        'data_damaged',
        'This session’s stored data is damaged; run `sessiondesk doctor` on the data directory',
        { requestId: request.id },
      );
    }
    if (err instanceof StoreUnavailableError) {
      fail(request, 'store unavailable', err);
      return send(
        reply,
        503,
        'unavailable',
        'The data directory cannot be written right now; try again shortly',
        {
          requestId: request.id,
        },
      );
    }
    if (isDatabaseUnavailable(err)) {
      fail(request, 'database unavailable', err);
      return send(
        reply.header('retry-after', '1'),
        503,
        'unavailable',
        'The team database cannot be reached right now; try again shortly',
        { requestId: request.id },
      );
    }
    fail(request, 'internal error', err);
    return send(reply, 500, 'internal', 'Internal server error', { requestId: request.id });
  });
}

/** 404 in the error shape. The URL is not repeated: its query may hold an API key. */
export function sendNotFound(reply: FastifyReply): FastifyReply {
  return send(reply, 404, 'not_found', 'No such route');
}

/**
 * Fastify's own routing errors (a URL that does not decode): its default answer is in
 * another shape and repeats the URL, query and any API key in it included.
 */
export function sendFrameworkError(_err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void send(reply.header('x-content-type-options', 'nosniff'), 400, 'bad_request', 'The URL is not valid');
}

/**
 * Requests that Node's HTTP parser refuses (a malformed request line or header, too many
 * header bytes) never reach Fastify's handlers; they are answered here, in the same shape.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request took too long to arrive']
        : [400, 'The request is not valid HTTP'];
  const body = JSON.stringify({ error: { code: 'bad_request', message } } satisfies ErrorResponse);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `x-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
