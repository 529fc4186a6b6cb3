import type { z } from 'zod';
import { ErrorResponseSchema, type ErrorResponse } from '../../../src-shared/errors';

/** An error answer from the server, in its one error shape. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: NonNullable<ErrorResponse['error']['details']> = [],
  ) {
    super(message);
  }

  /** The message for one field, e.g. `body.repoUrl`, if the server named it. */
  fieldError(path: string): string | undefined {
    return this.details.find((d) => d.path === path)?.message;
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever the server says the sign-in is missing or has expired. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function request<S extends z.ZodType>(
  method: string,
  path: string,
  schema: S,
  body?: unknown,
): Promise<z.infer<S>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, 'network', 'Cannot reach Session Desk. Is the server still running?');
  }
  if (!response.ok) {
    const parsed = ErrorResponseSchema.safeParse(await response.json().catch(() => null));
    const error = parsed.success
      ? new ApiError(
          response.status,
          parsed.data.error.code,
          parsed.data.error.message,
          parsed.data.error.details,
        )
      : new ApiError(response.status, 'unknown', `The server answered ${response.status}`);
    if (response.status === 401 && path !== '/api/auth/sign-in') {
      for (const listener of unauthorizedListeners) listener();
    }
    throw error;
  }
  if (response.status === 204) return schema.parse(null);
  return schema.parse(await response.json());
}

/** The only way the dashboard talks to the server: every answer is parsed with its schema. */
export const api = {
  get: <S extends z.ZodType>(path: string, schema: S) => request('GET', path, schema),
  post: <S extends z.ZodType>(path: string, schema: S, body?: unknown) =>
    request('POST', path, schema, body ?? {}),
  patch: <S extends z.ZodType>(path: string, schema: S, body: unknown) =>
    request('PATCH', path, schema, body),
  put: <S extends z.ZodType>(path: string, schema: S, body: unknown) => request('PUT', path, schema, body),
  delete: <S extends z.ZodType>(path: string, schema: S) => request('DELETE', path, schema),
};
