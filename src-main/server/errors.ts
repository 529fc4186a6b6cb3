import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ErrorCode, ErrorResponse } from '../../src-shared/errors.js';
import { AppError, type ErrorDetail } from '../errors.js';
import { StoreUnavailableError } from '../store/store.js';

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

/** The one error handler: every error leaves in the same shape, and a 5xx says nothing internal. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      if (err.headers) void reply.headers(err.headers);
      return send(reply, err.status, err.code, err.message, err.details ? { details: err.details } : {});
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const where = err.validationContext ?? 'body';
      const details = err.validation.map((issue) => ({
        path: [where, ...issue.instancePath.split('/').filter(Boolean)].join('.'),
        message: issue.message ?? 'is invalid',
      }));
      return send(reply, 400, 'validation_failed', `The request ${where} is invalid`, { details });
    }
    const known = err.code ? FASTIFY_CLIENT_ERRORS[err.code] : undefined;
    if (known) return send(reply, known.status, known.code, known.message ?? err.message);
    if (
      err instanceof SyntaxError ||
      (err.statusCode === 400 && /prototype|constructor/u.test(err.message))
    ) {
      // JSON.parse and secure-json-parse (__proto__ / constructor keys) failures.
      return send(reply, 400, 'bad_request', 'The body is not acceptable JSON');
    }
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return send(reply, err.statusCode, 'bad_request', 'The request could not be processed');
    }
    if (err instanceof StoreUnavailableError) {
      request.log.error({ err }, 'store unavailable');
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
    request.log.error({ err }, 'request failed');
    return send(reply, 500, 'internal', 'Internal server error', { requestId: request.id });
  });
}

/** 404 in the error shape. The URL is not repeated: its query may hold an API key. */
export function sendNotFound(reply: FastifyReply): FastifyReply {
  return send(reply, 404, 'not_found', 'No such route');
}
