import { MAX_MESSAGE_BYTES } from './transcript-format.js';

/** Data on disk that cannot be read back as it was written: never answered with an empty store. */
export class DataDamagedError extends Error {}

/** A transcript that does not hold the frames its session counts. */
export class TranscriptDamagedError extends DataDamagedError {}

/** A database whose schema is newer than this app's migrations: it refuses to open it. */
export class DatabaseTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `The database is at schema version ${found}, newer than this app knows (${known}). ` +
        'Update Session Desk to open it.',
    );
  }
}

/** An error as a log line or message shows it: with its system code (ENOSPC, EACCES) when it has one. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/** A message whose JSON is larger than MAX_MESSAGE_BYTES. */
export class MessageTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(
      `The message is ${bytes} bytes as JSON; the largest a session stores is ${MAX_MESSAGE_BYTES} bytes (16 MiB).`,
    );
  }
}
