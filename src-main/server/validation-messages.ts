import type { FastifySchemaValidationError } from 'fastify';
import type { ErrorDetail } from '../errors.js';

/** Where a request part is named in error details: the words a caller uses, not Fastify's. */
const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

type IssueParams = {
  expected?: string;
  received?: string;
  values?: unknown[];
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  format?: string;
  keys?: string[];
};

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
};

function bound(kind: 'least' | 'most', params: IssueParams): string {
  const limit = Number(kind === 'least' ? params.minimum : params.maximum);
  switch (params.origin) {
    case 'string':
      return kind === 'least' && limit === 1
        ? 'must not be empty'
        : `must be at ${kind} ${limit} character${limit === 1 ? '' : 's'}`;
    case 'array':
    case 'set':
      return `must have at ${kind} ${limit} item${limit === 1 ? '' : 's'}`;
    default:
      return `must be at ${kind} ${limit}`;
  }
}

/**
 * What is wrong with one value, as a phrase to follow its name ("must be one of …").
 * The schemas' own messages are written that way already (lower case); zod's defaults
 * ("Invalid input: expected number, received NaN") are put in those words.
 */
function describe(issue: FastifySchemaValidationError): string {
  const message = issue.message ?? '';
  if (/^[a-z]/u.test(message)) return message;
  const params = issue.params as IssueParams;
  switch (issue.keyword) {
    case 'invalid_type':
      if (/received undefined$/u.test(message)) return 'is required';
      return `must be ${TYPE_WORDS[params.expected ?? ''] ?? params.expected ?? 'of another type'}`;
    case 'invalid_value':
      return `must be one of ${(params.values ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return bound('least', params);
    case 'too_big':
      return bound('most', params);
    case 'invalid_format':
      return params.format === 'email'
        ? 'must be an email address'
        : params.format === 'url'
          ? 'must be a URL'
          : 'is not in the expected form';
    case 'unrecognized_keys':
      return 'is not a field this request takes';
    default:
      return 'is not valid';
  }
}

/**
 * Validation errors as details (`query.limit`: "must be a whole number from 1 to 1000") and
 * a message that names the first problem, so a caller who reads only the message knows
 * which parameter to fix.
 */
export function describeValidation(
  part: string,
  issues: FastifySchemaValidationError[],
): { message: string; details: ErrorDetail[] } {
  const where = PART_NAMES[part] ?? part;
  const details: ErrorDetail[] = issues.flatMap((issue) => {
    const path = issue.instancePath.split('/').filter(Boolean);
    const problem = describe(issue);
    // One detail per unknown field, named by the field itself.
    const keys = issue.keyword === 'unrecognized_keys' ? (issue.params as IssueParams).keys : undefined;
    if (keys?.length) return keys.map((key) => ({ path: [where, ...path, key].join('.'), message: problem }));
    return [{ path: [where, ...path].join('.'), message: problem }];
  });
  const first = details[0];
  if (!first) return { message: `The request ${where} is invalid`, details };
  const name = first.path === where ? `The request ${where}` : first.path.slice(where.length + 1);
  const more =
    details.length > 1 ? ` (and ${details.length - 1} more problem${details.length > 2 ? 's' : ''})` : '';
  return { message: `${name} ${first.message}${more}`, details };
}
