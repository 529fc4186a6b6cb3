import { ErrorResponseSchema } from '../../../src-shared/errors.js';

/** The error responses a route declares (for the API document), all in the one error shape. */
export function errorResponses(...codes: number[]) {
  return Object.fromEntries(codes.map((code) => [code, ErrorResponseSchema]));
}
