import type { ErrorCode } from '../src-shared/errors.js';

export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * An error meant for the caller: its status, code and message are safe to show. Anything
 * else that is thrown becomes a 500 with a generic message.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) =>
  new AppError(400, 'validation_failed', message, details);
export const unauthorized = (message = 'Missing or invalid credentials') =>
  new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'You do not have access to this workspace') =>
  new AppError(403, 'forbidden', message);
export const notFound = (message: string) => new AppError(404, 'not_found', message);
export const conflict = (message: string) => new AppError(409, 'conflict', message);
