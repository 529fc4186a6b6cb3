import { z } from 'zod';
import { HISTORY_KINDS, type HistoryKind } from './sessions.js';

/** The CLIs' names, as people know them. */
export const HISTORY_KIND_NAMES: Record<HistoryKind, string> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  'qwen-code': 'Qwen Code',
  opencode: 'OpenCode',
};

/** What `sessiondesk history import` asks: the workspace, the CLIs' roots, the author. */
export const HistoryImportBodySchema = z.strictObject({
  /** The workspace's id, or its name. */
  workspace: z.string().min(1).max(200),
  sources: z
    .array(
      z.strictObject({
        kind: z.enum(HISTORY_KINDS),
        rootDir: z.string().min(1).max(4096),
        /** Named on the command line: a missing one is an error, not a note. */
        explicit: z.boolean(),
      }),
    )
    .min(1)
    .max(HISTORY_KINDS.length),
  authorEmail: z.string().min(1).max(320).optional(),
});
export type HistoryImportBody = z.infer<typeof HistoryImportBodySchema>;

/** One line of the command's report per source. */
export const HistorySourceReportSchema = z.object({
  kind: z.enum(HISTORY_KINDS),
  rootDir: z.string(),
  missing: z.boolean(),
  sessions: z.number().int(),
  newSessions: z.number().int(),
  updatedSessions: z.number().int(),
  messages: z.number().int(),
  /**
   * Entries of the folder that were not read: links, pipes and other files that are not
   * regular files inside it, and files that could not be read (the first few, then a count).
   */
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  skippedCount: z.number().int(),
});
export type HistorySourceReport = z.infer<typeof HistorySourceReportSchema>;
export const HistoryImportResponseSchema = z.object({ sources: z.array(HistorySourceReportSchema) });

/** The admin route `sessiondesk history import` uses while a server holds the data directory. */
export const HISTORY_IMPORT_PATH = '/api/admin/history/import';

/** A remembered source as Settings shows it. */
export const HistorySourceSchema = z.object({
  id: z.string(),
  kind: z.enum(HISTORY_KINDS),
  rootDir: z.string().describe("The CLI's root folder (what ~/.claude, ~/.codex or ~/.gemini is), in full."),
  author: z.object({ id: z.string(), email: z.string() }).describe('Whom its sessions are imported as.'),
  paused: z.boolean().describe('A paused source is not followed until resumed.'),
  sessions: z.number().int(),
  messages: z.number().int(),
  lastImportAt: z.string().optional(),
});
export type HistorySource = z.infer<typeof HistorySourceSchema>;
/** An agent CLI's folder in its default place on this machine, not yet a source of the workspace. */
export const FoundHistoryFolderSchema = z.object({
  kind: z.enum(HISTORY_KINDS),
  rootDir: z.string(),
});
export type FoundHistoryFolder = z.infer<typeof FoundHistoryFolderSchema>;
export const HistorySourcesResponseSchema = z.object({
  sources: z.array(HistorySourceSchema),
  found: z
    .array(FoundHistoryFolderSchema)
    .describe(
      "The CLIs' folders in their default places (as the agents' environment sets them) that hold sessions and are not sources yet; for owners only, empty for other members.",
    ),
  importCommand: z
    .string()
    .optional()
    .describe(
      "The `sessiondesk history import` command line that imports into this workspace on the server's machine, with `--data-dir` when the server's data directory is not the default one (its path for the administrator, `DATA_DIR` for everyone else). Absent on a team server (PostgreSQL), where that command is refused: sessions run in a terminal come from each desktop with `sessiondesk push`.",
    ),
});
export const HistorySourceResponseSchema = z.object({ source: HistorySourceSchema });
export const NewHistorySourceBodySchema = z.strictObject({
  kind: z.enum(HISTORY_KINDS),
  rootDir: z
    .string()
    .min(1)
    .max(4096)
    .describe(
      "A full path on the server's machine; a leading `~` is the home folder of the user the server runs as. Refused (400, saying why) unless it is that CLI's folder: see the history import guide.",
    ),
});
export const UpdateHistorySourceBodySchema = z.strictObject({ paused: z.boolean() });
export const HistorySourceParamsSchema = z.object({
  organizationId: z.string().max(100),
  sourceId: z.string().max(100),
});
