import { z } from 'zod';
import { AGENT_KINDS } from './constants.js';
import { AgentFilterSchema, OrgQuerySchema, wholeNumberQuery } from './sessions.js';

/** Hits per page at most, and the page size without `limit`. */
export const SEARCH_LIMIT_MAX = 100;
export const SEARCH_LIMIT_DEFAULT = 20;
/** Words in one search at most (a phrase counts each of its words; a repeated word counts once). */
export const SEARCH_WORDS_MAX = 32;
/** Letters or digits a prefix (`foo*`) needs at least before its `*`. */
export const SEARCH_PREFIX_MIN = 3;

export const SearchQuerySchema = OrgQuerySchema.extend({
  q: z
    .string()
    .max(500)
    .describe(
      `Words match in any order and case; \`"quoted phrases"\` match as phrases; \`foo*\` matches a prefix. ` +
        `At most ${SEARCH_WORDS_MAX} words (a phrase counts each of its words; a repeated word counts once); ` +
        `a prefix needs at least ${SEARCH_PREFIX_MIN} letters or digits before its \`*\`.`,
    ),
  agent: AgentFilterSchema.optional(),
  repository: z
    .string()
    .max(500)
    .optional()
    .describe('Case-insensitive: `<owner>/<repo>`, an `<owner>`, or a repository URL.'),
  limit: wholeNumberQuery(1, SEARCH_LIMIT_MAX)
    .optional()
    .describe(`Hits per page (default ${SEARCH_LIMIT_DEFAULT}).`),
  cursor: z.string().max(500).optional().describe('`nextCursor` of the previous page.'),
});
export type SearchQuery = z.infer<typeof SearchQuerySchema>;

export const SearchHitSchema = z.object({
  sessionId: z.string(),
  title: z.string(),
  agent: z.enum(AGENT_KINDS).optional(),
  createdAt: z.string(),
  /** 0-based: the position `/messages` pages by. */
  messageIndex: z.number().int().min(0),
  /** Plain text, at most 240 characters, around the match. */
  snippet: z.string(),
  /** `[start, end)` character ranges of the matched terms in `snippet`. */
  highlights: z.array(z.tuple([z.number().int(), z.number().int()])),
});
export type SearchHit = z.infer<typeof SearchHitSchema>;

export const SearchIndexingSchema = z
  .object({
    complete: z.boolean(),
    pendingSessions: z.number().int().min(0),
  })
  .describe(
    "Whether the index held every message of the workspace's sessions when the search ran; " +
      'while it does not (a first index, an import), hits may be missing: `pendingSessions` are still being indexed.',
  );
export type SearchIndexing = z.infer<typeof SearchIndexingSchema>;

export const SearchResponseSchema = z.object({
  hits: z.array(SearchHitSchema),
  nextCursor: z.string().optional(),
  indexing: SearchIndexingSchema,
});
export type SearchResponse = z.infer<typeof SearchResponseSchema>;
