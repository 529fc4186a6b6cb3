import { z } from 'zod';

export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'api_key_not_allowed',
  'organization_required',
  'unauthorized',
  'forbidden',
  'forbidden_host',
  'forbidden_origin',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  'data_damaged',
  'unavailable',
  'gh_unavailable',
  'push_failed',
  'gh_failed',
] as const;

export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

export const ErrorDetailSchema = z.object({
  path: z.string().describe('Where the problem is, e.g. `body.title` or `query.limit`.'),
  message: z.string(),
});

/** The one shape of every error response. */
export const ErrorResponseSchema = z.object({
  error: z.object({
    code: ErrorCodeSchema,
    message: z.string(),
    details: z.array(ErrorDetailSchema).optional(),
    requestId: z.string().optional().describe('Present on 5xx: quote it when reporting a problem.'),
  }),
});
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;
